import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type {
  PublicLlmSettings,
  TestLlmConnectionRequest,
  TestLlmConnectionResponse,
  UpdateLlmSettingsRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of the LLM settings view (openspec llm-settings). */
@Injectable({ providedIn: 'root' })
export class LlmSettingsApi {
  private readonly http = inject(HttpClient);

  get(): Promise<PublicLlmSettings> {
    return firstValueFrom(this.http.get<PublicLlmSettings>(API_PATHS.llmSettings));
  }

  save(request: UpdateLlmSettingsRequest): Promise<PublicLlmSettings> {
    return firstValueFrom(this.http.put<PublicLlmSettings>(API_PATHS.llmSettings, request));
  }

  test(request: TestLlmConnectionRequest): Promise<TestLlmConnectionResponse> {
    return firstValueFrom(this.http.post<TestLlmConnectionResponse>(API_PATHS.llmSettingsTest, request));
  }
}
