/**
 * The per-chat lanes: the turns of one chat run one after another behind a bounded queue, different chats run
 * concurrently. A lane knows its running turn (its abort controller, why it was cancelled, its event log for
 * connections that attach mid-turn) and is dropped once idle. Cancel aborts the running turn only (queued turns stay
 * queued); a deleted chat also loses its queued turns; closing the lanes aborts every turn and waits a short grace.
 * What a turn does is the executor's (TurnPipeline); the lanes only decide when it runs.
 */
import { Logger } from '@nestjs/common';
import type { ChannelMessageSource, MessageMetadata, UntrustedSource } from '@cashcode/contracts';
import type { ToolAllowlist } from '../agent/tool-registry';
import type { TurnRequester } from '../agent/tool-gate';
import { logIds } from '../common/log-context';
import { errorType, formatEvent } from '../common/log-format';
import type { ChatActionPlan } from './chat-actions';
import type { TurnEventLog } from './turn-event-log';

/** turns waiting behind the running one, per chat */
export const MAX_QUEUED_TURNS_PER_CHAT = 16;
/** how long shutdown waits for aborted turns to wind down (the whole process stop is bounded to 2 s, see server.ts) */
const SHUTDOWN_GRACE_MS = 1_000;

/** The turn's log lines keep the logger name they had when the chat was one service (log queries rely on it). */
export const CHAT_LOGGER = 'ChatService';

export type SubmitResult = { accepted: true; queued: number } | { accepted: false; detail: string; code: string };

export type CancelCause = 'client' | 'deleted' | 'shutdown';

/** One queued message or chat action of a chat. */
export interface TurnJob {
  chatId: string;
  content: string;
  metadata: MessageMetadata;
  headless?: boolean;
  /** the only tools the turn may use (an automation's subset); absent: every tool */
  toolAllowlist?: ToolAllowlist;
  /** a checked chat action (regenerate, edit, continue); absent for a plain message */
  plan?: ChatActionPlan;
  /** workspace-relative paths of the chat's uploaded files the message refers to (checked when the turn starts) */
  attachments?: readonly string[];
  /** a message that came through a channel: who sent it (recorded on the user record) */
  source?: ChannelMessageSource;
  /** untrusted content the message itself brings (SubmitOptions.untrustedSources) */
  untrustedSources?: readonly UntrustedSource[];
  /** who the turn answers (SubmitOptions.requester) */
  requester?: TurnRequester;
}

export interface RunningTurn {
  controller: AbortController;
  cause: CancelCause | null;
  done: Promise<void>;
  /** what the turn emitted so far, for connections that start following the chat mid-turn (turn-event-log.ts) */
  log: TurnEventLog | null;
}

/** Runs one turn to its end; a rejection is logged as a crashed turn and the lane goes on. */
export type TurnExecutor = (job: TurnJob, running: RunningTurn) => Promise<void>;

interface Lane {
  queue: TurnJob[];
  running: RunningTurn | null;
}

export class ChatLanes {
  private readonly logger = new Logger(CHAT_LOGGER);
  private readonly lanes = new Map<string, Lane>();
  /** turns running now, over all chats */
  private running = 0;
  private shuttingDown = false;

  constructor(private readonly execute: TurnExecutor) {}

  /** Whether the lanes were closed (shutdown): nothing more is accepted. */
  get closed(): boolean {
    return this.shuttingDown;
  }

  /** Turns running now, over all chats. */
  get runningTurns(): number {
    return this.running;
  }

  /** Queues a turn on its chat's lane (started at once when the lane is idle). */
  enqueue(job: TurnJob): SubmitResult {
    const { chatId } = job;
    if (this.shuttingDown) {
      return { accepted: false, detail: 'The server is shutting down.', code: 'shutting_down' };
    }
    let lane = this.lanes.get(chatId);
    if (!lane) {
      lane = { queue: [], running: null };
      this.lanes.set(chatId, lane);
    }
    if (lane.queue.length >= MAX_QUEUED_TURNS_PER_CHAT) {
      return {
        accepted: false,
        detail: `Too many messages are waiting for this chat (at most ${MAX_QUEUED_TURNS_PER_CHAT}); wait for the current answer.`,
        code: 'queue_full',
      };
    }
    lane.queue.push(job);
    const queued = lane.queue.length;
    if (!lane.running) this.drain(chatId, lane);
    return { accepted: true, queued };
  }

  /** Whether a turn of this chat runs or waits. */
  busy(chatId: string): boolean {
    const lane = this.lanes.get(chatId);
    return Boolean(lane?.running) || (lane?.queue.length ?? 0) > 0;
  }

  /** Whether a turn of this chat is running. */
  isRunning(chatId: string): boolean {
    return this.lanes.get(chatId)?.running != null;
  }

  /** The log of the running turn of a chat (null when none runs). */
  runningLog(chatId: string): TurnEventLog | null {
    return this.lanes.get(chatId)?.running?.log ?? null;
  }

  /** Aborts the running turn of a chat (the first cause given is kept). Returns whether a turn was running. */
  abort(chatId: string, cause: CancelCause): boolean {
    const running = this.lanes.get(chatId)?.running;
    if (!running) return false;
    if (running.cause === null) running.cause = cause;
    running.controller.abort();
    return true;
  }

  /** A deleted chat: its queued turns are dropped and its running turn aborted. */
  drop(chatId: string): void {
    const lane = this.lanes.get(chatId);
    if (!lane) return;
    lane.queue.length = 0;
    this.abort(chatId, 'deleted');
  }

  /** Shutdown: refuses new turns, drops the queues, aborts the running turns and waits (bounded) for them to end. */
  async close(): Promise<void> {
    this.shuttingDown = true;
    const running: Promise<void>[] = [];
    for (const [chatId, lane] of this.lanes) {
      lane.queue.length = 0;
      if (lane.running) {
        running.push(lane.running.done);
        this.abort(chatId, 'shutdown');
      }
    }
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(running),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_GRACE_MS);
          timer.unref();
        }),
      ]);
      if (timer) clearTimeout(timer);
    }
  }

  private drain(chatId: string, lane: Lane): void {
    const job = lane.queue.shift();
    if (!job) {
      if (this.lanes.get(chatId) === lane) this.lanes.delete(chatId);
      return;
    }
    const running: RunningTurn = { controller: new AbortController(), cause: null, done: Promise.resolve(), log: null };
    lane.running = running;
    this.running++;
    running.done = this.execute(job, running)
      .catch((err: unknown) => {
        this.logger.error(formatEvent('agent.turn.crashed', { error_type: errorType(err) }), logIds({ chatId }));
      })
      .finally(() => {
        this.running--;
        lane.running = null;
        this.drain(chatId, lane);
      });
  }
}
