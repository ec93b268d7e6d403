import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { CHANNEL_API_PATHS, channelPath } from '@cashcode/contracts';
import type {
  ChannelListResponse,
  TelegramApprovedSender,
  TelegramChannelSettings,
  TelegramPairingsResponse,
  UpdateTelegramChannelRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of Settings → Channels: the channel list, the Telegram settings, its pairings and approved senders. */
@Injectable({ providedIn: 'root' })
export class ChannelsApi {
  private readonly http = inject(HttpClient);

  list(): Promise<ChannelListResponse> {
    return firstValueFrom(this.http.get<ChannelListResponse>(CHANNEL_API_PATHS.channels));
  }

  telegram(): Promise<TelegramChannelSettings> {
    return firstValueFrom(this.http.get<TelegramChannelSettings>(CHANNEL_API_PATHS.telegram));
  }

  /** `token` is write-only: `""` clears the stored one; the answer carries only its masked hint. */
  updateTelegram(request: UpdateTelegramChannelRequest): Promise<TelegramChannelSettings> {
    return firstValueFrom(this.http.put<TelegramChannelSettings>(CHANNEL_API_PATHS.telegram, request));
  }

  pairings(): Promise<TelegramPairingsResponse> {
    return firstValueFrom(this.http.get<TelegramPairingsResponse>(CHANNEL_API_PATHS.telegramPairings));
  }

  approve(code: string): Promise<TelegramApprovedSender> {
    return firstValueFrom(
      this.http.post<TelegramApprovedSender>(channelPath(CHANNEL_API_PATHS.telegramPairings, code, 'approve'), {}),
    );
  }

  revoke(senderId: string): Promise<unknown> {
    return firstValueFrom(this.http.delete(channelPath(CHANNEL_API_PATHS.telegramSenders, senderId)));
  }
}
