/**
 * Turn orchestration. No transport types: events go out through `events$` and the gateway fans them out to the
 * chat's subscribers.
 *
 * - Per-chat serial lanes with a bounded queue; different chats run concurrently.
 * - A turn: LLM check (lease acquired once, released in finally) → load the chat → title + `session_updated` for an
 *   untitled chat without history → the turn context (turn-context.ts: prompt, MCP, selected Skills) → the streaming
 *   runner (its notices mapped to events by turn-events-mapper.ts) → persist → `stream_end` → `done`.
 * - Failure: one `error` (clear English, a code); when the model call failed the user message is persisted with an
 *   `error` marker (kept out of the model context; a retry is a new turn), metadata restored except the title.
 * - Cancel (cancel/stop frame): aborts the running turn of that chat only (queued turns stay queued); the partial
 *   answer is persisted marked cancelled when anything was streamed (or a tool round completed), then `stream_end` and
 *   `done` with `cancelled: true`.
 * - Session deleted: the running turn is aborted (nothing persisted) and queued turns of that chat are dropped.
 * - Chat actions (regenerate, edit, continue; chat-actions.ts): checked against the current branch, refused while a
 *   turn of the chat runs or waits, then run as turns whose records replace the old ones (`supersedes`).
 * - Titles: the fallback title before the first turn; after its `done`, the model's title (chat-title.ts), off the
 *   critical path. The answer record keeps the turn's usage (when reported) and duration.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy } from '@nestjs/common';
import { AppEventBus, OnAppEvent } from '../events/event-bus';
import { Subject, type Subscription } from 'rxjs';
import {
  codePointLength,
  type MessageMetadata,
  type Money,
  type ServerEvent,
  type TokenUsage,
} from '@cashcode/contracts';
import { AgentCancelledError, AgentRunner, ModelCallError, type PartialTurn } from '../agent/agent-runner';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { logIds, type LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import {
  LLM_CLIENT_PROVIDER,
  LlmNotConfiguredError,
  type LlmClientProvider,
  type ProviderLease,
} from '../llm-settings/llm-provider';
import { MemoryStore, TITLE_SOURCE_KEY, type AppendOptions } from '../memory/memory-store';
import { UNTITLED_SESSION_TITLE } from '../memory/sessions.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ChatTitleService, fallbackTitle } from './chat-title';
import { McpService } from '../mcp/mcp.service';
import { AttachmentsService } from '../attachments/attachments.service';
import { SkillTurnService } from '../skills/skill-turn.service';
import { DomainError, domainErrorEvent } from '../common/domain-error';
import { SpendLimitError } from '../usage/usage.errors';
import { UsageService } from '../usage/usage.service';
import { buildTurnContext } from './turn-context';
import { DeltaCoalescer } from './delta-coalescer';
import { CONTINUE_INSTRUCTION, planChatAction, type ChatActionPlan, type ChatActionRequest } from './chat-actions';
import { TurnEventLog } from './turn-event-log';
import { turnEndEvents, turnEventsListener } from './turn-events-mapper';
import type { ChatMessage, ChatMetadata, FinalAnswer, HistoryRecord, UserTurnInput } from '../memory/memory.types';
import {
  SESSION_DELETED_EVENT,
  TURN_COMPLETED_EVENT,
  type SessionDeletedEvent,
  type TurnCompletedEvent,
} from '../events/app-events';

/** turns waiting behind the running one, per chat */
export const MAX_QUEUED_TURNS_PER_CHAT = 16;
/** how long shutdown waits for aborted turns to wind down (the whole process stop is bounded to 2 s, see server.ts) */
const SHUTDOWN_GRACE_MS = 1_000;

export interface ChatOutboundEvent {
  chatId: string;
  event: ServerEvent;
}

export type SubmitResult = { accepted: true; queued: number } | { accepted: false; detail: string; code: string };

type CancelCause = 'client' | 'deleted' | 'shutdown';

interface TurnJob {
  chatId: string;
  content: string;
  metadata: MessageMetadata;
  headless?: boolean;
  /** a checked chat action (regenerate, edit, continue); absent for a plain message */
  plan?: ChatActionPlan;
  /** workspace-relative paths of the chat's uploaded files the message refers to (checked when the turn starts) */
  attachments?: readonly string[];
}

/** How a turn is run: `headless` when no one can answer approvals (the OpenAI-compatible endpoint). */
export interface SubmitOptions {
  headless?: boolean;
}

interface RunningTurn {
  controller: AbortController;
  cause: CancelCause | null;
  done: Promise<void>;
  /** what the turn emitted so far, for connections that start following the chat mid-turn (turn-event-log.ts) */
  log: TurnEventLog | null;
}

interface Lane {
  queue: TurnJob[];
  running: RunningTurn | null;
}

/** Local ISO-8601 with seconds and offset, e.g. 2026-07-26T12:00:00+08:00 (session_updated.updated_at). */
export function localIsoWithOffset(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

function withoutTitle(metadata: ChatMetadata): string {
  const { title: _title, [TITLE_SOURCE_KEY]: _source, ...rest } = metadata;
  return JSON.stringify(rest);
}

/** The usage (when the provider reported any), cost (when priced) and duration stored with a turn's answer. */
function answerStats(usage: TokenUsage, started: number, cost?: Money): Pick<FinalAnswer, 'usage' | 'duration_ms' | 'cost'> {
  const reported = usage.prompt_tokens > 0 || usage.completion_tokens > 0 || usage.total_tokens > 0;
  return {
    duration_ms: Math.round(performance.now() - started),
    ...(reported ? { usage: { ...usage } } : {}),
    ...(cost ? { cost: { ...cost } } : {}),
  };
}

/** A continued answer counts the stopped part's tokens and time too. */
function continuedStats(
  plan: Extract<ChatActionPlan, { kind: 'continue' }>,
  final: FinalAnswer,
): Pick<FinalAnswer, 'usage' | 'duration_ms'> {
  const stats: Pick<FinalAnswer, 'usage' | 'duration_ms'> = {};
  if (typeof final.duration_ms === 'number') stats.duration_ms = final.duration_ms + (plan.durationMs ?? 0);
  const parts = [plan.usage, final.usage].filter((usage): usage is TokenUsage => usage !== undefined);
  if (parts.length > 0) {
    stats.usage = {
      prompt_tokens: parts.reduce((sum, usage) => sum + usage.prompt_tokens, 0),
      completion_tokens: parts.reduce((sum, usage) => sum + usage.completion_tokens, 0),
      total_tokens: parts.reduce((sum, usage) => sum + usage.total_tokens, 0),
    };
  }
  return stats;
}

/** `done` with the cursors of what the turn persisted (additive `user_cursor` / `answer_cursor`). */
function withCursors(events: ServerEvent[], written: readonly HistoryRecord[]): ServerEvent[] {
  if (written.length === 0) return events;
  const user = written.find((record) => record.role === 'user');
  const answer = written[written.length - 1]!;
  return events.map((event) =>
    event.event === 'done'
      ? { ...event, ...(user ? { user_cursor: user.cursor } : {}), answer_cursor: answer.cursor }
      : event,
  );
}

function errorType(err: unknown): string {
  if (err instanceof Error) return err.name;
  if (typeof err === 'object' && err !== null) return err.constructor?.name ?? 'object';
  return typeof err;
}

@Injectable()
export class ChatService implements OnModuleDestroy {
  private readonly logger = new Logger(ChatService.name);
  private readonly lanes = new Map<string, Lane>();
  private readonly outbound = new Subject<ChatOutboundEvent>();
  /** integer stream ids, unique per turn (time-seeded so they don't repeat across restarts) */
  private nextStreamId = Date.now();
  /** turns running now, over all chats */
  private runningTurns = 0;
  private shuttingDown = false;

  /** Every event of every chat, in order; the gateway fans them out. */
  readonly events$ = this.outbound.asObservable();
  /** every event of a chat passes here: the deltas of one tick leave as one event */
  private readonly deltas = new DeltaCoalescer((chatId, event) => {
    // recorded as it goes out (deltas already merged): a connection attaching later replays exactly what was sent,
    // one attached now gets it live
    this.lanes.get(chatId)?.running?.log?.record(event);
    this.outbound.next({ chatId, event });
  });

  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    private readonly memory: MemoryStore,
    private readonly runner: AgentRunner,
    private readonly prompt: SystemPromptBuilder,
    private readonly eventBus: AppEventBus,
    private readonly skills: SkillTurnService,
    private readonly mcp: McpService,
    private readonly titles: ChatTitleService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly attachments: AttachmentsService,
    /** spend-limit warnings of a chat's model calls go to the chat's connections (usage_warning) */
    @Optional() usage?: UsageService,
  ) {
    this.usageWarnings = usage?.warnings$.subscribe((warning) => this.emit(warning.chat_id, warning));
  }

  private readonly usageWarnings: Subscription | undefined;

  /** Queues a validated message on its chat's lane. */
  submit(
    chatId: string,
    content: string,
    metadata: MessageMetadata,
    attachments: readonly string[] = [],
    options: SubmitOptions = {},
  ): SubmitResult {
    return this.submitJob({ chatId, content, metadata, attachments, ...(options.headless === true ? { headless: true } : {}) });
  }

  private submitJob(job: TurnJob): SubmitResult {
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

  /**
   * Queues a chat action (chat-actions.ts) once it is checked against the chat's current branch. Refused while a turn
   * of the chat runs or waits (the action is about the last turn, which must be settled first).
   */
  async submitAction(chatId: string, request: ChatActionRequest): Promise<SubmitResult> {
    const busy = (): SubmitResult | null =>
      this.lanes.get(chatId)?.running || (this.lanes.get(chatId)?.queue.length ?? 0) > 0
        ? { accepted: false, detail: 'A turn of this chat is still running; wait for it or stop it first.', code: 'turn_running' }
        : null;
    if (this.shuttingDown) return { accepted: false, detail: 'The server is shutting down.', code: 'shutting_down' };
    const before = busy();
    if (before) return before;
    const records = await this.memory.readRecords(chatId);
    const check = planChatAction(records, request);
    if (!check.ok) return { accepted: false, detail: check.detail, code: check.code };
    // a message may have been queued while the history was read
    const after = busy();
    if (after) return after;
    const { plan } = check;
    const content = plan.kind === 'resend' ? plan.content : CONTINUE_INSTRUCTION;
    return this.submitJob({ chatId, content, metadata: plan.metadata, plan });
  }

  /** Cancels the running turn of a chat (queued turns stay queued). Returns whether a turn was running. */
  cancel(chatId: string): boolean {
    return this.abortRunning(chatId, 'client');
  }

  /** Whether a turn of this chat is running. */
  isRunning(chatId: string): boolean {
    return this.lanes.get(chatId)?.running != null;
  }

  /** The log of the running turn of a chat (null when none runs): what a connection that starts following it replays. */
  runningTurnLog(chatId: string): TurnEventLog | null {
    return this.lanes.get(chatId)?.running?.log ?? null;
  }

  /** A deleted session: abort its running turn without persisting anything, and drop its queued turns. */
  @OnAppEvent(SESSION_DELETED_EVENT)
  onSessionDeleted(payload: SessionDeletedEvent): void {
    const lane = this.lanes.get(payload.chatId);
    if (!lane) return;
    lane.queue.length = 0;
    this.abortRunning(payload.chatId, 'deleted');
  }

  async onModuleDestroy(): Promise<void> {
    this.shuttingDown = true;
    this.usageWarnings?.unsubscribe();
    const running: Promise<void>[] = [];
    for (const [chatId, lane] of this.lanes) {
      lane.queue.length = 0;
      if (lane.running) {
        running.push(lane.running.done);
        this.abortRunning(chatId, 'shutdown');
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
    this.outbound.complete();
  }

  private abortRunning(chatId: string, cause: CancelCause): boolean {
    const running = this.lanes.get(chatId)?.running;
    if (!running) return false;
    if (running.cause === null) running.cause = cause;
    running.controller.abort();
    return true;
  }

  private drain(chatId: string, lane: Lane): void {
    const job = lane.queue.shift();
    if (!job) {
      if (this.lanes.get(chatId) === lane) this.lanes.delete(chatId);
      return;
    }
    const running: RunningTurn = { controller: new AbortController(), cause: null, done: Promise.resolve(), log: null };
    lane.running = running;
    this.runningTurns++;
    running.done = this.executeTurn(job, running)
      .catch((err: unknown) => {
        this.logger.error(formatEvent('agent.turn.crashed', { error_type: errorType(err) }), logIds({ chatId }));
      })
      .finally(() => {
        this.runningTurns--;
        lane.running = null;
        this.drain(chatId, lane);
      });
  }

  /** The only running turn writes its append on the event loop; concurrent turns go through the thread pool. */
  private appendOptions(): AppendOptions {
    return { inline: this.runningTurns === 1 };
  }

  private emit(chatId: string, event: ServerEvent): void {
    this.deltas.push(chatId, event);
  }

  private emitAll(chatId: string, events: readonly ServerEvent[]): void {
    for (const event of events) this.emit(chatId, event);
  }

  private executeTurn(job: TurnJob, running: RunningTurn): Promise<void> {
    const turnId = randomBytes(16).toString('hex');
    const streamId = this.nextStreamId++;
    running.log = new TurnEventLog(job.chatId, streamId, { content: job.content, metadata: job.metadata });
    return this.turn(job, running, turnId, streamId, logIds({ chatId: job.chatId, turnId }));
  }

  private async turn(job: TurnJob, running: RunningTurn, turnId: string, streamId: number, ids: LogIds): Promise<void> {
    const started = performance.now();
    const { chatId, content, metadata, plan } = job;
    const selection = metadata.llm;
    const signal = running.controller.signal;
    this.logger.log(
      formatEvent('agent.turn.started', {
        content_chars: codePointLength(content),
        provider: selection.provider,
        model: selection.model,
      }),
      ids,
    );

    // LLM check: nothing is created or persisted when the provider is not configured
    let lease: ProviderLease;
    try {
      lease = this.llm.acquire(selection.provider);
    } catch (err) {
      const notConfigured = err instanceof LlmNotConfiguredError;
      this.logger.warn(
        formatEvent('agent.turn.rejected', {
          reason: notConfigured ? 'llm_not_configured' : 'llm_unavailable',
          provider: selection.provider,
        }),
        ids,
      );
      this.emit(chatId, {
        event: 'error',
        chat_id: chatId,
        detail: notConfigured ? (err as Error).message : 'The model provider is not available right now.',
        code: notConfigured ? 'llm_not_configured' : 'llm_unavailable',
      });
      return;
    }

    let metadataBefore: ChatMetadata | null = null;
    /** the fallback title this turn gave an untitled chat (null: the chat had a title or history) */
    let autoTitle: string | null = null;
    // the user side of the turn, known before the context is built (receipts are filled in once it is)
    let failedUser: UserTurnInput | null = null;
    try {
      this.llm.rememberSelection(selection);
      // a path that is not an uploaded file of this chat fails the turn before anything is written
      const attachments = await this.attachments.resolveForTurn(chatId, job.attachments ?? []);
      const chat = await this.memory.getChat(chatId);
      metadataBefore = structuredClone(chat.metadata);
      // a continuation has no user message of its own: a failure persists nothing
      failedUser = plan?.kind === 'continue' ? null : { content };

      // automatic title: only for an untitled chat without history; survives a failure of this turn. The model
      // writes a better one after the turn succeeded (chat-title.ts).
      if (!plan && !chat.metadata.title && chat.history.length === 0) {
        autoTitle = fallbackTitle(content);
        if (autoTitle !== '') {
          await this.memory.saveMetadata(chatId, { ...chat.metadata, title: autoTitle, [TITLE_SOURCE_KEY]: 'auto' });
        }
        this.emit(chatId, {
          event: 'session_updated',
          chat_id: chatId,
          title: autoTitle || UNTITLED_SESSION_TITLE,
          updated_at: localIsoWithOffset(new Date()),
        });
      }

      const sources = { prompt: this.prompt, mcp: this.mcp, skills: this.skills };
      // regenerate and edit answer the history before the replaced message; continue the whole current branch
      const history =
        plan?.kind === 'resend' ? await this.memory.historyBefore(chatId, plan.supersedes) : chat.history;
      const context = await buildTurnContext(sources, {
        chatId,
        turnId,
        content,
        metadata,
        history,
        signal,
        attachments: attachments.map(({ name, path, size, mime }) => ({ name, path, size, mime })),
      });
      const { skillReceipts, user } = context;
      for (const warning of context.warnings) this.emit(chatId, { event: 'warning', chat_id: chatId, ...warning });
      if (plan?.kind !== 'continue') failedUser = user;

      // image attachments go to the model as image parts only when it takes images (never persisted)
      const acceptsImages = this.llm.acceptsImages?.(selection.provider, selection.model) === true;
      const userImages = acceptsImages ? await this.attachments.images(attachments) : [];

      let outcome;
      try {
        outcome = await this.runner.run({
          client: lease.client,
          provider: selection.provider,
          model: selection.model,
          messages: context.messages,
          chatId,
          turnId,
          signal,
          temporaryTools: context.temporaryTools,
          headless: job.headless === true,
          acceptsImages,
          userImages,
          listener: turnEventsListener(chatId, streamId, (event) => this.emit(chatId, event)),
        });
      } catch (err) {
        if (err instanceof AgentCancelledError) {
          const partial = { ...err.partial, durable: [...skillReceipts, ...err.partial.durable] };
          await this.finishCancelled(job, running.cause ?? 'client', partial, user, streamId, started, ids);
          return;
        }
        throw err;
      }

      // explicit Skill receipts come first among the turn's durable messages
      outcome = { ...outcome, durable: [...skillReceipts, ...outcome.durable] };
      // persist, then stream_end and done (done only after the turn is on disk)
      const final = { content: outcome.content, ...answerStats(outcome.usage, started, outcome.cost) };
      const written = await this.persist(job, user, outcome.durable, final);
      const durationSec = this.elapsedSec(started);
      this.emitAll(
        chatId,
        withCursors(
          turnEndEvents(chatId, streamId, { durationSec, usage: outcome.usage, cancelled: false, ...(outcome.cost ? { cost: outcome.cost } : {}) }),
          written,
        ),
      );
      if (autoTitle !== null && this.config.modelTitles) this.requestModelTitle(chatId, autoTitle, content, outcome.content, selection);
      this.logger.log(
        formatEvent('agent.turn.completed', {
          duration_ms: Math.round(durationSec * 1000),
          model_calls: outcome.modelCalls,
          tool_calls: outcome.toolCalls,
          failed_tool_calls: outcome.failedToolCalls,
          iteration_limit_reached: outcome.iterationLimitReached,
          prompt_tokens: outcome.usage.prompt_tokens,
          completion_tokens: outcome.usage.completion_tokens,
          total_tokens: outcome.usage.total_tokens,
        }),
        ids,
      );
      this.publishCompleted(
        {
          chatId,
          turnId,
          provider: selection.provider,
          model: selection.model,
          usage: outcome.usage,
          durationSec,
          userContent: plan?.kind === 'continue' ? plan.userContent : content,
          durable: outcome.durable,
          answer: outcome.content,
          toolCalls: outcome.toolCalls,
          failedToolCalls: outcome.failedToolCalls,
          iterationLimitReached: outcome.iterationLimitReached,
        },
        ids,
      );
    } catch (err) {
      await this.failTurn(chatId, err, metadataBefore, failedUser, ids, plan?.supersedes);
    } finally {
      this.skills.endTurn(chatId, turnId);
      lease.release();
    }
  }

  private async finishCancelled(
    job: TurnJob,
    cause: CancelCause,
    partial: PartialTurn,
    user: UserTurnInput,
    streamId: number,
    started: number,
    ids: LogIds,
  ): Promise<void> {
    const { chatId } = job;
    let persisted = false;
    let written: HistoryRecord[] = [];
    // a deleted session stays deleted; otherwise keep what the user already saw
    if (cause !== 'deleted' && (partial.streamed || partial.durable.length > 0)) {
      try {
        const final = { content: partial.content, cancelled: true, ...answerStats(partial.usage, started, partial.cost) };
        written = await this.persist(job, user, partial.durable, final);
        persisted = true;
      } catch (err) {
        this.logger.error(formatEvent('agent.turn.persist_failed', { cancelled: true, error_type: errorType(err) }), ids);
      }
    }
    const durationSec = this.elapsedSec(started);
    this.logger.log(
      formatEvent('agent.turn.cancelled', {
        cause,
        duration_ms: Math.round(durationSec * 1000),
        partial_persisted: persisted,
      }),
      ids,
    );
    this.emitAll(
      chatId,
      withCursors(
        turnEndEvents(chatId, streamId, { durationSec, usage: partial.usage, cancelled: true, ...(partial.cost ? { cost: partial.cost } : {}) }),
        written,
      ),
    );
  }

  /**
   * Appends a turn: a plain one, one that replaces the records from the replaced message on (regenerate, edit), or
   * a continuation whose answer starts with the stopped text and replaces it.
   */
  private persist(
    job: TurnJob,
    user: UserTurnInput,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
  ): Promise<HistoryRecord[]> {
    const { chatId, plan } = job;
    if (plan?.kind === 'continue') {
      return this.memory.appendContinuation(
        chatId,
        durable,
        { ...final, ...continuedStats(plan, final), content: plan.partial + final.content },
        { ...this.appendOptions(), supersedes: plan.supersedes },
      );
    }
    const options = plan ? { ...this.appendOptions(), supersedes: plan.supersedes } : this.appendOptions();
    return this.memory.appendTurn(chatId, user, durable, final, options);
  }

  /**
   * One clear error for the turn; metadata goes back to its pre-turn state except the title. A failed model call keeps
   * the user message in history with an `error` marker (the same code and safe detail as the event) so a reload shows
   * it; other failures (a selection that cannot be honoured, an internal error) persist nothing.
   */
  private async failTurn(
    chatId: string,
    err: unknown,
    metadataBefore: ChatMetadata | null,
    user: UserTurnInput | null,
    ids: LogIds,
    supersedes?: number,
  ): Promise<void> {
    let detail: string;
    let code: string;
    if (err instanceof DomainError) {
      // model failures, selections that cannot be honoured, …: the same detail and code REST would send
      ({ detail, code } = domainErrorEvent(err));
      this.logger.warn(formatEvent('agent.turn.failed', { error_kind: code }), ids);
    } else {
      detail = 'The turn failed because of an internal error; the message was not saved.';
      code = 'internal_error';
      this.logger.error(formatEvent('agent.turn.failed', { error_kind: code, error_type: errorType(err) }), ids);
    }
    if (metadataBefore) await this.restoreMetadata(chatId, metadataBefore, ids);
    // a refused model call (spend limit) is kept like a failed one: the user message with its error, Retry later
    if (user && (err instanceof ModelCallError || err instanceof SpendLimitError)) {
      try {
        const options = supersedes === undefined ? this.appendOptions() : { ...this.appendOptions(), supersedes };
        await this.memory.appendFailedTurn(chatId, user, { kind: code, message: detail }, options);
      } catch (persistErr) {
        this.logger.error(
          formatEvent('agent.turn.persist_failed', { failed: true, error_type: errorType(persistErr) }),
          ids,
        );
      }
    }
    this.emit(chatId, {
      event: 'error',
      chat_id: chatId,
      detail,
      code,
      ...(err instanceof SpendLimitError ? { limit: err.limit } : {}),
    });
  }

  private async restoreMetadata(chatId: string, before: ChatMetadata, ids: LogIds): Promise<void> {
    try {
      const current = (await this.memory.getChat(chatId)).metadata;
      if (withoutTitle(current) === withoutTitle(before)) return;
      const restored: ChatMetadata = { ...before };
      if (current.title) restored.title = current.title;
      else delete restored.title;
      if (current[TITLE_SOURCE_KEY] !== undefined) restored[TITLE_SOURCE_KEY] = current[TITLE_SOURCE_KEY];
      else delete restored[TITLE_SOURCE_KEY];
      await this.memory.saveMetadata(chatId, restored);
    } catch (err) {
      this.logger.error(formatEvent('agent.turn.metadata_restore_failed', { error_type: errorType(err) }), ids);
    }
  }

  /** Off the turn's critical path: the model's title replaces the fallback (unless renamed), then `session_updated`. */
  private requestModelTitle(
    chatId: string,
    fallback: string,
    userContent: string,
    answer: string,
    chatModel: MessageMetadata['llm'],
  ): void {
    void this.titles.improve({ chatId, fallback, userContent, answer, chatModel }).then((title) => {
      if (title === null) return;
      this.emit(chatId, { event: 'session_updated', chat_id: chatId, title, updated_at: localIsoWithOffset(new Date()) });
    });
  }

  private publishCompleted(event: TurnCompletedEvent, ids: LogIds): void {
    try {
      this.eventBus.emit(TURN_COMPLETED_EVENT, event);
    } catch (err) {
      this.logger.error(formatEvent('agent.turn.listener_failed', { error_type: errorType(err) }), ids);
    }
  }

  private elapsedSec(started: number): number {
    return Math.round(performance.now() - started) / 1000;
  }
}

