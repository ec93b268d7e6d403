import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  Automation,
  AutomationInput,
  AutomationRunResponse,
  AutomationRunsPage,
  AutomationSchedule,
  AutomationsResponse,
  LlmModelsResponse,
  SchedulePreviewResponse,
  TelegramPairingsResponse,
  ToolPoliciesResponse,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const AUTOMATIONS_PATH = API_PATHS.automations;

/** Runs of one page of the history. */
export const RUNS_PAGE_SIZE = 10;

/** REST calls of the Automations page (openspec console "Requirement: Automations page"). */
@Injectable({ providedIn: 'root' })
export class AutomationsApi {
  private readonly http = inject(HttpClient);

  list(): Promise<AutomationsResponse> {
    return firstValueFrom(this.http.get<AutomationsResponse>(AUTOMATIONS_PATH));
  }

  create(input: AutomationInput): Promise<Automation> {
    return firstValueFrom(this.http.post<Automation>(AUTOMATIONS_PATH, input));
  }

  update(id: string, input: AutomationInput): Promise<Automation> {
    return firstValueFrom(this.http.put<Automation>(apiPath(AUTOMATIONS_PATH, id), input));
  }

  remove(id: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(apiPath(AUTOMATIONS_PATH, id)));
  }

  runNow(id: string): Promise<AutomationRunResponse> {
    return firstValueFrom(this.http.post<AutomationRunResponse>(apiPath(AUTOMATIONS_PATH, id, 'run'), {}));
  }

  runs(id: string, before: string | null): Promise<AutomationRunsPage> {
    const params: Record<string, string> = { limit: String(RUNS_PAGE_SIZE) };
    if (before !== null) params['before'] = before;
    return firstValueFrom(this.http.get<AutomationRunsPage>(apiPath(AUTOMATIONS_PATH, id, 'runs'), { params }));
  }

  preview(schedule: AutomationSchedule): Promise<SchedulePreviewResponse> {
    return firstValueFrom(this.http.post<SchedulePreviewResponse>(apiPath(AUTOMATIONS_PATH, 'preview'), { schedule }));
  }

  /** the models the editor offers (the chat's model list) */
  models(): Promise<LlmModelsResponse> {
    return firstValueFrom(this.http.get<LlmModelsResponse>(API_PATHS.llmModels));
  }

  /** the conversations the editor offers to deliver to (the approved Telegram senders) */
  telegramSenders(): Promise<TelegramPairingsResponse> {
    return firstValueFrom(this.http.get<TelegramPairingsResponse>('/api/channels/telegram/pairings'));
  }

  /** the tools the editor offers (the known tools of the tool policies) */
  tools(): Promise<ToolPoliciesResponse> {
    return firstValueFrom(this.http.get<ToolPoliciesResponse>(API_PATHS.toolPolicies));
  }
}
