import { HttpClient } from '@angular/common/http';
import { DOCUMENT, Injectable, inject } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type { ClientConfigResponse } from '@cashcode/contracts';
import { catchError, firstValueFrom, of, timeout } from 'rxjs';

import { ApiToken } from '../api/api-token';
import { SignIn } from '../api/sign-in';
import { withToken, wsUrlFromConfig, wsUrlOverride } from './ws-url';

export interface ResolvedEndpoint {
  url: string;
  /** the server wants a credential and this browser is not signed in (no session cookie, no accepted token) */
  tokenMissing: boolean;
}

/** Resolves the gateway URL once per page load (see ws-url.ts for the order). */
@Injectable({ providedIn: 'root' })
export class WsEndpoint {
  private readonly document = inject(DOCUMENT);
  private readonly http = inject(HttpClient);
  private readonly apiToken = inject(ApiToken);
  private readonly signIn = inject(SignIn);

  async resolve(): Promise<ResolvedEndpoint> {
    const view = this.document.defaultView;
    const location = this.document.location;
    const token = this.apiToken.token();
    const meta = this.document.querySelector('meta[name="cashcode-ws-url"]')?.getAttribute('content') ?? null;
    const override = wsUrlOverride(location, view?.__CASHCODE__, meta);
    if (override) return { url: withToken(override, token), tokenMissing: false };
    const config = await firstValueFrom(
      this.http.get<Partial<ClientConfigResponse>>(API_PATHS.clientConfig).pipe(
        timeout(5_000),
        catchError(() => of(null)),
      ),
    );
    const usable = config && typeof config === 'object' ? config : null;
    // the session cookie is HttpOnly: only the server can say whether this browser is signed in
    const signedOut = usable?.token_required === true && (await this.signIn.check()) === 'signed-out';
    return { url: withToken(wsUrlFromConfig(location, usable), token), tokenMissing: signedOut };
  }
}
