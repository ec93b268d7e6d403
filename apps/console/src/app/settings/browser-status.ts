import { HttpClient } from '@angular/common/http';
import { Injectable, inject, signal } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type { BrowserStatus, HealthResponse } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

import type { MessageKey } from '../core/i18n/i18n';

/** The one line Settings shows about the browser tool: its message key and placeholders. */
export interface BrowserLine {
  key: MessageKey;
  params: Record<string, string>;
  enabled: boolean;
}

/** What the health document's `browser` says, as the line to show; null when the server does not report it. */
export function browserLine(status: BrowserStatus | undefined): BrowserLine | null {
  if (status === undefined) return null;
  if (!status.enabled) return { key: 'toolPolicies.browser.off', params: { reason: status.reason ?? '' }, enabled: false };
  return {
    key: status.sandboxed ? 'toolPolicies.browser.sandboxed' : 'toolPolicies.browser.unconfined',
    params: { executable: status.executable ?? 'Chromium' },
    enabled: true,
  };
}

/** Whether the `browser` tool is offered (`GET /api/health` → `browser`), read for Settings → Tools & approvals. */
@Injectable({ providedIn: 'root' })
export class BrowserStatusSource {
  private readonly http = inject(HttpClient);
  private readonly value = signal<BrowserStatus | null>(null);
  readonly status = this.value.asReadonly();

  async load(): Promise<void> {
    try {
      const health = await firstValueFrom(this.http.get<HealthResponse>(API_PATHS.health));
      this.value.set(health.browser ?? null);
    } catch {
      // the line is informational: without it the page still works
      this.value.set(null);
    }
  }
}
