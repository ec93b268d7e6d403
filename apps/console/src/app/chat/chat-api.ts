import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  LlmModelsResponse,
  PublicLlmSettings,
  RenameSessionResponse,
  SessionExportFormat,
  SessionSearchResponse,
  SessionListResponse,
  SessionMessagesResponse,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of the chat feature (sessions, model list, whether a model is configured). */
@Injectable({ providedIn: 'root' })
export class ChatApi {
  private readonly http = inject(HttpClient);

  listSessions(): Promise<SessionListResponse> {
    return firstValueFrom(this.http.get<SessionListResponse>(API_PATHS.sessions));
  }

  messages(chatId: string): Promise<SessionMessagesResponse> {
    return firstValueFrom(
      this.http.get<SessionMessagesResponse>(apiPath(API_PATHS.sessions, chatId, 'messages')),
    );
  }

  rename(chatId: string, title: string): Promise<RenameSessionResponse> {
    return firstValueFrom(
      this.http.patch<RenameSessionResponse>(apiPath(API_PATHS.sessions, chatId), { title }),
    );
  }

  /** the export's body as text (Markdown, or the JSON document), so a failure still arrives as an ApiError */
  exportSession(chatId: string, format: SessionExportFormat): Promise<string> {
    return firstValueFrom(
      this.http.get(apiPath(API_PATHS.sessions, chatId, 'export'), { params: { format }, responseType: 'text' }),
    );
  }

  searchSessions(q: string): Promise<SessionSearchResponse> {
    return firstValueFrom(this.http.get<SessionSearchResponse>(API_PATHS.sessions + '/search', { params: { q } }));
  }

  remove(chatId: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(apiPath(API_PATHS.sessions, chatId)));
  }

  models(): Promise<LlmModelsResponse> {
    return firstValueFrom(this.http.get<LlmModelsResponse>(API_PATHS.llmModels));
  }

  llmSettings(): Promise<PublicLlmSettings> {
    return firstValueFrom(this.http.get<PublicLlmSettings>(API_PATHS.llmSettings));
  }
}
