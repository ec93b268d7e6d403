/**
 * The in-memory log of one running turn (openspec chat "Requirement: Replay of a running turn"): every event the turn
 * has emitted so far, kept so that a connection which starts following the chat mid-turn (a reload, a second tab, a
 * reconnect) gets the turn from its start in one `turn_replay` event before the live events.
 *
 * Bounded: consecutive deltas of the stream are coalesced into one event, a tool call keeps only its last progress
 * report, and the whole log is capped (UTF-8 bytes of the events' JSON). Past the cap nothing more is recorded and the
 * replay says `truncated`. The log lives as long as its turn runs (the chat's lane drops it when the turn ends,
 * chat-lanes.ts).
 */
import type { MessageMetadata, ServerEvent, TurnReplayEvent } from '@cashcode/contracts';

/** default cap of one turn's log */
export const TURN_LOG_MAX_BYTES = 2 * 1024 * 1024;

function sizeOf(event: ServerEvent): number {
  return Buffer.byteLength(JSON.stringify(event), 'utf8');
}

export class TurnEventLog {
  private readonly entries: ServerEvent[] = [];
  private bytes = 0;
  private full = false;

  constructor(
    readonly chatId: string,
    readonly streamId: number,
    readonly user: { content: string; metadata: MessageMetadata },
    private readonly maxBytes = TURN_LOG_MAX_BYTES,
  ) {
    this.bytes = Buffer.byteLength(JSON.stringify(user), 'utf8');
  }

  /** bytes the log holds (approximately what a replay frame weighs) */
  get size(): number {
    return this.bytes;
  }

  get truncated(): boolean {
    return this.full;
  }

  /** Records one event of the turn. */
  record(event: ServerEvent): void {
    if (this.full) return;
    const last = this.entries[this.entries.length - 1];
    if (event.event === 'delta' && last?.event === 'delta' && last.stream_id === event.stream_id) {
      this.grow(Buffer.byteLength(event.text, 'utf8'), () => {
        this.entries[this.entries.length - 1] = { ...last, text: last.text + event.text };
      });
      return;
    }
    // a sub-agent's answer text is coalesced the same way (openspec subagents)
    if (
      event.event === 'subagent_event' &&
      event.inner.event === 'delta' &&
      last?.event === 'subagent_event' &&
      last.inner.event === 'delta' &&
      last.call_id === event.call_id
    ) {
      const text = last.inner.text + event.inner.text;
      this.grow(Buffer.byteLength(event.inner.text, 'utf8'), () => {
        this.entries[this.entries.length - 1] = { ...last, inner: { event: 'delta', text } };
      });
      return;
    }
    if (event.event === 'tool_progress') {
      const index = this.entries.findIndex((entry) => entry.event === 'tool_progress' && entry.call_id === event.call_id);
      if (index >= 0) {
        const before = sizeOf(this.entries[index]);
        this.grow(sizeOf(event) - before, () => {
          this.entries[index] = event;
        });
        return;
      }
    }
    this.grow(sizeOf(event), () => {
      this.entries.push(event);
    });
  }

  /**
   * The replay of the turn so far. `skip` leaves out events that the caller sends on their own (the approval and
   * elicitation requests still pending).
   */
  replay(skip: (event: ServerEvent) => boolean = () => false): TurnReplayEvent {
    return {
      event: 'turn_replay',
      chat_id: this.chatId,
      stream_id: this.streamId,
      user: this.user,
      events: this.entries.filter((event) => !skip(event)),
      truncated: this.full,
    };
  }

  private grow(added: number, apply: () => void): void {
    if (this.bytes + added > this.maxBytes) {
      this.full = true;
      return;
    }
    this.bytes += added;
    apply();
  }
}
