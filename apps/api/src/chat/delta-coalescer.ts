/**
 * Merges the text deltas of a chat that arrive in the same tick into one `delta` event (openspec chat "Deltas of one
 * tick are sent as one event"). One network read of a model stream can hold hundreds of SSE events (under load it
 * does); each used to become its own JSON-encoded WebSocket frame. The merged delta goes out on `process.nextTick`,
 * after the promise jobs that parsed that read, so a real token stream is not delayed; any other event of the chat
 * flushes the pending delta first, so the order of a turn's events is unchanged.
 */
import type { DeltaEvent, ServerEvent } from '@cashcode/contracts';

export class DeltaCoalescer {
  private readonly pending = new Map<string, DeltaEvent>();

  constructor(private readonly out: (chatId: string, event: ServerEvent) => void) {}

  push(chatId: string, event: ServerEvent): void {
    if (event.event !== 'delta') {
      this.flush(chatId);
      this.out(chatId, event);
      return;
    }
    const waiting = this.pending.get(chatId);
    if (waiting && waiting.stream_id === event.stream_id) {
      waiting.text += event.text;
      return;
    }
    if (waiting) this.flush(chatId);
    this.pending.set(chatId, { ...event });
    process.nextTick(() => this.flush(chatId));
  }

  /** Sends the chat's pending delta, if any. */
  flush(chatId: string): void {
    const waiting = this.pending.get(chatId);
    if (!waiting) return;
    this.pending.delete(chatId);
    this.out(chatId, waiting);
  }
}
