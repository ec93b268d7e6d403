import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import type {
  LlmModelsResponse,
  PublicLlmSettings,
  RenameSessionResponse,
  SessionListResponse,
  SessionMessagesResponse,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of the chat feature (sessions, model list, whether a model is configured). */
@Injectable({ providedIn: 'root' })
export class ChatApi {
  private readonly http = inject(HttpClient);

  listSessions(): Promise<SessionListResponse> {
    return firstValueFrom(this.http.get<SessionListResponse>('/api/sessions'));
  }

  messages(chatId: string): Promise<SessionMessagesResponse> {
    return firstValueFrom(
      this.http.get<SessionMessagesResponse>(`/api/sessions/${encodeURIComponent(chatId)}/messages`),
    );
  }

  rename(chatId: string, title: string): Promise<RenameSessionResponse> {
    return firstValueFrom(
      this.http.patch<RenameSessionResponse>(`/api/sessions/${encodeURIComponent(chatId)}`, { title }),
    );
  }

  remove(chatId: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(`/api/sessions/${encodeURIComponent(chatId)}`));
  }

  models(): Promise<LlmModelsResponse> {
    return firstValueFrom(this.http.get<LlmModelsResponse>('/api/settings/llm/models'));
  }

  llmSettings(): Promise<PublicLlmSettings> {
    return firstValueFrom(this.http.get<PublicLlmSettings>('/api/settings/llm'));
  }
}
