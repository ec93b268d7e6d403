import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type { CreatedOpenAiCompatKey, OpenAiCompatSettings, UpdateOpenAiCompatSettingsRequest } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of the OpenAI-compatible API settings: the switch, the options and the access keys. */
@Injectable({ providedIn: 'root' })
export class OpenAiCompatApi {
  private readonly http = inject(HttpClient);

  get(): Promise<OpenAiCompatSettings> {
    return firstValueFrom(this.http.get<OpenAiCompatSettings>(API_PATHS.openAiCompat));
  }

  update(request: UpdateOpenAiCompatSettingsRequest): Promise<OpenAiCompatSettings> {
    return firstValueFrom(this.http.put<OpenAiCompatSettings>(API_PATHS.openAiCompat, request));
  }

  createKey(name: string): Promise<CreatedOpenAiCompatKey> {
    return firstValueFrom(this.http.post<CreatedOpenAiCompatKey>(API_PATHS.openAiCompatKeys, { name }));
  }

  revokeKey(id: string): Promise<unknown> {
    return firstValueFrom(this.http.delete(apiPath(API_PATHS.openAiCompatKeys, id)));
  }
}
