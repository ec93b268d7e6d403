import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS } from '@cashcode/contracts';
import type {
  ChannelListResponse,
  LlmModelsResponse,
  TelegramApprovedSender,
  TelegramChannelSettings,
  TelegramPairingsResponse,
  UpdateTelegramChannelRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST paths of the channels (openspec channels). */
const PATHS = {
  channels: '/api/channels',
  telegram: '/api/channels/telegram',
  telegramPairings: '/api/channels/telegram/pairings',
  telegramSenders: '/api/channels/telegram/senders',
} as const;

/** `base` followed by the URL-encoded `segments`. */
function path(base: string, ...segments: string[]): string {
  return [base, ...segments.map((segment) => encodeURIComponent(segment))].join('/');
}

/** REST calls of Settings → Channels: the channel list, the Telegram settings, its pairings and approved senders. */
@Injectable({ providedIn: 'root' })
export class ChannelsApi {
  private readonly http = inject(HttpClient);

  list(): Promise<ChannelListResponse> {
    return firstValueFrom(this.http.get<ChannelListResponse>(PATHS.channels));
  }

  telegram(): Promise<TelegramChannelSettings> {
    return firstValueFrom(this.http.get<TelegramChannelSettings>(PATHS.telegram));
  }

  /** `token` is write-only: `""` clears the stored one; the answer carries only its masked hint. */
  updateTelegram(request: UpdateTelegramChannelRequest): Promise<TelegramChannelSettings> {
    return firstValueFrom(this.http.put<TelegramChannelSettings>(PATHS.telegram, request));
  }

  pairings(): Promise<TelegramPairingsResponse> {
    return firstValueFrom(this.http.get<TelegramPairingsResponse>(PATHS.telegramPairings));
  }

  approve(code: string): Promise<TelegramApprovedSender> {
    return firstValueFrom(
      this.http.post<TelegramApprovedSender>(path(PATHS.telegramPairings, code, 'approve'), {}),
    );
  }

  /** the models the LLM settings offer (the channel's model is chosen among them) */
  models(): Promise<LlmModelsResponse> {
    return firstValueFrom(this.http.get<LlmModelsResponse>(API_PATHS.llmModels));
  }

  revoke(senderId: string): Promise<unknown> {
    return firstValueFrom(this.http.delete(path(PATHS.telegramSenders, senderId)));
  }
}
