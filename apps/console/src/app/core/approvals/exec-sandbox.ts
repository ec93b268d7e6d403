import { HttpClient } from '@angular/common/http';
import { Injectable, inject, signal } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type { ExecSandboxStatus } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

import { ApiError, errorMessage } from '../api/api-error';

/**
 * Whether `exec` runs confined right now (`GET /api/settings/exec-sandbox`). Read once and shared: approval cards
 * whose request does not say `sandboxed` ask it, and the Tools & approvals settings show it.
 */
@Injectable({ providedIn: 'root' })
export class ExecSandbox {
  private readonly http = inject(HttpClient);
  private readonly value = signal<ExecSandboxStatus | null>(null);
  private readonly failure = signal<string | null>(null);
  private readonly unreported = signal(false);
  private inFlight: Promise<void> | null = null;

  readonly status = this.value.asReadonly();
  readonly error = this.failure.asReadonly();
  /** the server reports no sandbox state (neither route nor health field): only approval requests say it */
  readonly unavailable = this.unreported.asReadonly();

  /** Loads the status unless it is known (or being loaded); `force` reads it again. */
  load(force = false): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.value() !== null && !force) return Promise.resolve();
    this.inFlight = this.fetch().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async fetch(): Promise<void> {
    try {
      this.value.set(await firstValueFrom(this.http.get<ExecSandboxStatus>(API_PATHS.execSandbox)));
      this.failure.set(null);
      this.unreported.set(false);
    } catch (error) {
      const missing = error instanceof ApiError && error.status === 404;
      if (missing && (await this.fromHealth())) return;
      this.unreported.set(missing);
      this.failure.set(errorMessage(error));
    }
  }

  /** A server without the settings route may still report the sandbox in its health document. */
  private async fromHealth(): Promise<boolean> {
    try {
      const health = await firstValueFrom(this.http.get<{ exec_sandbox?: ExecSandboxStatus }>(API_PATHS.health));
      if (!health.exec_sandbox) return false;
      this.value.set(health.exec_sandbox);
      this.failure.set(null);
      this.unreported.set(false);
      return true;
    } catch {
      return false;
    }
  }
}
