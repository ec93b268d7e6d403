import { DestroyRef, Injectable, computed, inject, signal } from '@angular/core';
import type { ChatUsage, ServerEvent, SpendLimitStatus } from '@cashcode/contracts';

import { ChatSocket } from '../core/socket/chat-socket';
import { readStorage, writeStorage } from '../core/storage';
import { UsageApi } from './usage-api';
import { bannerLimit, limitAlertKey, mergeLimitStatus, parseLimitStatus } from './usage-format';

export const DISMISSED_LIMITS_STORAGE_KEY = 'cashcode.usageBannerDismissed';

function readDismissed(): Set<string> {
  try {
    const parsed: unknown = JSON.parse(readStorage(DISMISSED_LIMITS_STORAGE_KEY) ?? '[]');
    return new Set(Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === 'string') : []);
  } catch {
    return new Set();
  }
}

/**
 * Live usage of the chat view: the totals of the open chat (`GET /api/usage/chats/{id}`, again after each `done`) and
 * the spend-limit banner. The banner shows a limit in `warning` or `reached`, from the limits status (loaded at start
 * and after each `done`), a `usage_warning` event or a refusal; dismissing it hides that limit until its next window
 * or until it is reached.
 */
@Injectable({ providedIn: 'root' })
export class UsageLive {
  private readonly api = inject(UsageApi);
  private readonly socket = inject(ChatSocket);
  private readonly destroyRef = inject(DestroyRef);

  private readonly limits = signal<SpendLimitStatus[]>([]);
  private readonly dismissed = signal<ReadonlySet<string>>(readDismissed());
  private readonly chats = signal<Readonly<Record<string, ChatUsage>>>({});
  private readonly requests = new Map<string, number>();
  private sequence = 0;
  private started = false;

  /** the limit the banner shows, or null */
  readonly banner = computed(() => bannerLimit(this.limits(), this.dismissed()));

  start(): void {
    if (this.started) return;
    this.started = true;
    const subscription = this.socket.events.subscribe((event) => this.onEvent(event));
    this.destroyRef.onDestroy(() => subscription.unsubscribe());
    void this.refreshLimits();
  }

  /** What the server counted for a chat, once loaded. */
  chatUsage(chatId: string | null): ChatUsage | null {
    return chatId === null ? null : (this.chats()[chatId] ?? null);
  }

  async loadChat(chatId: string): Promise<void> {
    const token = ++this.sequence;
    this.requests.set(chatId, token);
    try {
      const usage = await this.api.chat(chatId);
      if (this.requests.get(chatId) !== token) return;
      this.chats.update((chats) => ({ ...chats, [chatId]: usage }));
    } catch {
      // a chat the ledger does not know yet, or a server without usage: the chat total shows tokens only
    }
  }

  async refreshLimits(): Promise<void> {
    try {
      const status = await this.api.limitsStatus();
      this.limits.set(status.limits.map(parseLimitStatus).filter((limit) => limit !== null));
    } catch {
      // unknown: no banner rather than a wrong one
    }
  }

  dismiss(limit: SpendLimitStatus): void {
    const next = new Set(this.dismissed());
    next.add(limitAlertKey(limit));
    this.dismissed.set(next);
    // only the keys of the limits known now are worth keeping
    const known = new Set(this.limits().map(limitAlertKey));
    writeStorage(DISMISSED_LIMITS_STORAGE_KEY, JSON.stringify([...next].filter((key) => known.has(key))));
  }

  onEvent(event: ServerEvent): void {
    if (event.event === 'usage_warning' || (event.event === 'error' && event.code === 'spend_limit_reached')) {
      const limit = parseLimitStatus(event.limit);
      if (limit) this.limits.update((limits) => mergeLimitStatus(limits, limit));
    } else if (event.event === 'done') {
      void this.refreshLimits();
      if (this.chats()[event.chat_id] !== undefined || this.requests.has(event.chat_id)) void this.loadChat(event.chat_id);
    }
  }
}
