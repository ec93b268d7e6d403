import { HttpClient, HttpErrorResponse, type HttpInterceptorFn } from '@angular/common/http';
import { DOCUMENT, Injectable, inject, signal } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type { AuthSessionResponse } from '@cashcode/contracts';
import { catchError, firstValueFrom, of, tap, timeout } from 'rxjs';

import { ApiToken } from './api-token';

/** What a session check found: signed in, not signed in (401), or the server could not be asked. */
export type SessionState = 'signed-in' | 'signed-out' | 'unknown';

/** True for an answer that means "this browser has no valid credential" (not a 401 of another kind of request). */
export function isSignedOutResponse(url: string, status: number): boolean {
  return status === 401 && url.startsWith('/api') && !url.startsWith(API_PATHS.authLogin);
}

/**
 * Whether this browser is signed in to the server. The server needs a credential on every call: the session cookie
 * that the sign-in link printed at each start sets (HttpOnly, so the page cannot see it), or the API token pasted
 * here (kept by ApiToken). The console learns it is not signed in from any 401 of its own `/api` calls (and checks
 * once at start); the shell then shows the sign-in screen.
 */
@Injectable({ providedIn: 'root' })
export class SignIn {
  private readonly http = inject(HttpClient);
  private readonly apiToken = inject(ApiToken);
  private readonly document = inject(DOCUMENT);
  private readonly signedOutFlag = signal(false);

  /** true once a call answered 401: the sign-in screen is shown */
  readonly signedOut = this.signedOutFlag.asReadonly();

  markSignedOut(): void {
    this.signedOutFlag.set(true);
  }

  /** Asks the server whether this browser is signed in (GET /api/auth/session). */
  async check(): Promise<SessionState> {
    const answer = await firstValueFrom(
      this.http.get<AuthSessionResponse>(API_PATHS.authSession).pipe(
        timeout(5_000),
        catchError((error: unknown) => of(sessionError(error))),
      ),
    );
    if (answer === 'signed-out') return 'signed-out';
    if (answer === 'unknown') return 'unknown';
    this.signedOutFlag.set(false);
    return 'signed-in';
  }

  /**
   * Uses a pasted API token: kept in this browser when the server accepts it, then the page reloads so that every
   * view and the chat socket start again with it. Resolves false (nothing kept) when the server refuses it.
   */
  async useToken(token: string): Promise<boolean> {
    const previous = this.apiToken.token();
    this.apiToken.set(token);
    if ((await this.check()) !== 'signed-in') {
      this.apiToken.set(previous);
      this.signedOutFlag.set(true);
      return false;
    }
    this.document.defaultView?.location.reload();
    return true;
  }
}

function sessionError(error: unknown): SessionState {
  // the interceptors turn a failed call into an ApiError carrying the status
  const status = (error as { status?: unknown } | null)?.status;
  return status === 401 ? 'signed-out' : 'unknown';
}

/** Any 401 of the console's own `/api` calls shows the sign-in screen. */
export const signInInterceptor: HttpInterceptorFn = (request, next) => {
  const signIn = inject(SignIn);
  return next(request).pipe(
    tap({
      error: (error: unknown) => {
        if (error instanceof HttpErrorResponse && isSignedOutResponse(request.url, error.status)) signIn.markSignedOut();
      },
    }),
  );
};
