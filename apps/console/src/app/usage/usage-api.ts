import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  ChatUsage,
  PriceTable,
  SpendLimitSettings,
  SpendLimitsStatus,
  UsageSummary,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** A date range of the usage queries (`YYYY-MM-DD`, server-local); absent: the server's default (the last 30 days). */
export interface UsageRange {
  from?: string;
  to?: string;
}

function rangeParams(range: UsageRange): Record<string, string> {
  const params: Record<string, string> = {};
  if (range.from) params['from'] = range.from;
  if (range.to) params['to'] = range.to;
  return params;
}

/** REST calls of usage, prices and spend limits (openspec console "Requirement: Usage, prices and spend limits"). */
@Injectable({ providedIn: 'root' })
export class UsageApi {
  private readonly http = inject(HttpClient);

  summary(range: UsageRange = {}): Promise<UsageSummary> {
    return firstValueFrom(this.http.get<UsageSummary>(API_PATHS.usageSummary, { params: rangeParams(range) }));
  }

  /** the CSV as text through the HttpClient (so the API token header goes with it and a failure is an ApiError) */
  exportCsv(range: UsageRange): Promise<string> {
    return firstValueFrom(this.http.get(API_PATHS.usageExport, { params: rangeParams(range), responseType: 'text' }));
  }

  chat(chatId: string): Promise<ChatUsage> {
    return firstValueFrom(this.http.get<ChatUsage>(apiPath(API_PATHS.usageChats, chatId)));
  }

  prices(): Promise<PriceTable> {
    return firstValueFrom(this.http.get<PriceTable>(API_PATHS.usagePrices));
  }

  savePrices(table: PriceTable): Promise<PriceTable> {
    return firstValueFrom(this.http.put<PriceTable>(API_PATHS.usagePrices, table));
  }

  limits(): Promise<SpendLimitSettings> {
    return firstValueFrom(this.http.get<SpendLimitSettings>(API_PATHS.usageLimits));
  }

  saveLimits(settings: SpendLimitSettings): Promise<SpendLimitSettings> {
    return firstValueFrom(this.http.put<SpendLimitSettings>(API_PATHS.usageLimits, settings));
  }

  limitsStatus(): Promise<SpendLimitsStatus> {
    return firstValueFrom(this.http.get<SpendLimitsStatus>(API_PATHS.usageLimitsStatus));
  }
}

/** The file name of a usage export: `cashcode-usage-<from>-<to>.csv`. */
export function usageExportFileName(range: UsageRange): string {
  return `cashcode-usage-${range.from ?? 'start'}-${range.to ?? 'today'}.csv`;
}
