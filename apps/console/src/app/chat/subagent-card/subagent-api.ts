import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath, type SubagentTranscript } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** The stored transcript of a sub-agent (`GET /api/sessions/{chat_id}/subagents/{call_id}`). */
@Injectable({ providedIn: 'root' })
export class SubagentApi {
  private readonly http = inject(HttpClient);

  transcript(chatId: string, callId: string): Promise<SubagentTranscript> {
    return firstValueFrom(this.http.get<SubagentTranscript>(apiPath(API_PATHS.sessions, chatId, 'subagents', callId)));
  }
}
