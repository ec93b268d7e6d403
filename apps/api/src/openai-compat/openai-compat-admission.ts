/**
 * How much `/v1` may run (openspec openai-compat "Requirement: Limits hold for every /v1 turn"): at most
 * MAX_CONCURRENT_TURNS turns at once, stateless and chat-bound together, and at most MAX_NEW_CHATS_PER_MINUTE chats
 * created through `/v1` a minute.
 */
import { HttpStatus } from '@nestjs/common';
import { OpenAiError } from '../common/openai-error';

/** `/v1` turns running at the same time, stateless and chat-bound together; more answer 429 `too_many_turns` */
export const MAX_CONCURRENT_TURNS = 8;
/** chats `/v1` may create (a chat id or mapped user the server does not hold yet) per minute; more answer 429 */
export const MAX_NEW_CHATS_PER_MINUTE = 20;
const NEW_CHAT_WINDOW_MS = 60_000;

export class TurnAdmission {
  private running = 0;
  /** when `/v1` created each chat of the last minute (oldest first) */
  private readonly chatsCreated: number[] = [];

  /** One of the MAX_CONCURRENT_TURNS slots every `/v1` turn holds while it runs; 429 `too_many_turns` when none is free. */
  takeSlot(): () => void {
    if (this.running >= MAX_CONCURRENT_TURNS) {
      throw new OpenAiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limit_error',
        'too_many_turns',
        `At most ${MAX_CONCURRENT_TURNS} requests run at the same time; retry shortly.`,
        null,
        { 'Retry-After': '1' },
      );
    }
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
    };
  }

  /**
   * A chat-bound request for a chat the server does not hold yet creates it: at most MAX_NEW_CHATS_PER_MINUTE of those
   * a minute (a client cycling chat ids would otherwise fill the data dir), 429 `too_many_chats` past that.
   */
  admitNewChat(): void {
    const now = Date.now();
    while (this.chatsCreated.length > 0 && (this.chatsCreated[0] as number) <= now - NEW_CHAT_WINDOW_MS) this.chatsCreated.shift();
    if (this.chatsCreated.length >= MAX_NEW_CHATS_PER_MINUTE) {
      const waitSec = Math.max(1, Math.ceil(((this.chatsCreated[0] as number) + NEW_CHAT_WINDOW_MS - now) / 1000));
      throw new OpenAiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limit_error',
        'too_many_chats',
        `At most ${MAX_NEW_CHATS_PER_MINUTE} new CashCode chats a minute can be started through this API; retry in ${waitSec} s.`,
        null,
        { 'Retry-After': String(waitSec) },
      );
    }
    this.chatsCreated.push(now);
  }
}
