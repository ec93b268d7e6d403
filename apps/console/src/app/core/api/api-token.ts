import { DOCUMENT, Injectable, inject, signal } from '@angular/core';
import type { HttpInterceptorFn } from '@angular/common/http';

import { readStorage, writeStorage } from '../storage';

export const API_TOKEN_STORAGE_KEY = 'cashcode.apiToken';

/**
 * The server's API token, needed only when CashCode listens beyond loopback. Opening the console once with
 * `?token=<token>` stores it in this browser (and removes it from the address bar); REST calls then send
 * `Authorization: Bearer <token>` and the WebSocket URL carries `?token=`.
 */
@Injectable({ providedIn: 'root' })
export class ApiToken {
  private readonly document = inject(DOCUMENT);
  private readonly value = signal<string | null>(this.initialToken());

  readonly token = this.value.asReadonly();

  set(token: string | null): void {
    const cleaned = token?.trim() || null;
    this.value.set(cleaned);
    writeStorage(API_TOKEN_STORAGE_KEY, cleaned);
  }

  private initialToken(): string | null {
    const location = this.document.location;
    const view = this.document.defaultView;
    if (location && view) {
      const url = new URL(location.href);
      const fromUrl = url.searchParams.get('token')?.trim();
      if (fromUrl) {
        writeStorage(API_TOKEN_STORAGE_KEY, fromUrl);
        url.searchParams.delete('token');
        view.history?.replaceState(view.history.state, '', `${url.pathname}${url.search}${url.hash}`);
        return fromUrl;
      }
    }
    return readStorage(API_TOKEN_STORAGE_KEY);
  }
}

/** Adds the bearer token to the console's own `/api` calls. */
export const apiTokenInterceptor: HttpInterceptorFn = (request, next) => {
  const token = inject(ApiToken).token();
  if (!token || !request.url.startsWith('/api')) return next(request);
  return next(request.clone({ setHeaders: { Authorization: `Bearer ${token}` } }));
};
