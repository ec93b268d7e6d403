/**
 * One chat turn from start to end: LLM check (lease acquired once, released in finally) → load the chat → title and
 * `session_updated` for an untitled chat without history → the turn context (turn-context.ts: history, system prompt,
 * selected MCP connectors and Skills) → the streaming runner (its notices mapped to events by turn-events-mapper.ts)
 * → persist (turn-persistence.ts) → `stream_end` → `done` → `turn.completed` on the event bus, then the model's title
 * off the critical path (chat-title.ts).
 * - Failure: one `error` (clear English, a code); when the model call failed the user message is persisted with an
 *   `error` marker (kept out of the model context; a retry is a new turn), metadata restored except the title.
 * - Cancel: the partial answer is persisted marked cancelled when anything was streamed (or a tool round completed),
 *   then `stream_end` and `done` with `cancelled: true`; a deleted chat's turn persists nothing.
 * When a turn runs is the lanes' decision (chat-lanes.ts); where its events go is the outlet's.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { codePointLength, type ServerEvent } from '@cashcode/contracts';
import { AgentCancelledError, AgentRunner, ModelCallError, type PartialTurn } from '../agent/agent-runner';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { AttachmentsService } from '../attachments/attachments.service';
import { DomainError, domainErrorEvent } from '../common/domain-error';
import { localIsoWithOffset } from '../common/local-iso-time';
import { logIds, type LogIds } from '../common/log-context';
import { errorType, formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TURN_COMPLETED_EVENT, type TurnCompletedEvent } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { LLM_CLIENT_PROVIDER, LlmNotConfiguredError, type LlmClientProvider, type ProviderLease } from '../llm-settings/llm-provider';
import { McpService } from '../mcp/mcp.service';
import type { ChatMetadata, HistoryRecord, UserTurnInput } from '../memory/memory.types';
import { HISTORY_LOG, type HistoryLog } from '../agent/history-log';
import { UNTITLED_SESSION_TITLE } from '../memory/sessions.service';
import { SkillTurnService } from '../skills/skill-turn.service';
import { SpendLimitError } from '../usage/usage.errors';
import { RunawayStoppedError } from '../agent/runaway-guard';
import { ChatTitleService, fallbackTitle } from './chat-title';
import { CHAT_LOGGER, type CancelCause, type RunningTurn, type TurnJob } from './chat-lanes';
import { buildTurnContext } from './turn-context';
import { TurnEventLog } from './turn-event-log';
import { turnEndEvents, turnEventsListener } from './turn-events-mapper';
import { answerStats, TurnPersistence, withCursors } from './turn-persistence';

/** Where a turn's events go, and what the lanes know that its writes depend on. */
export interface TurnOutlet {
  /** an event of the turn's chat, for the chat's connections */
  emit(event: ServerEvent): void;
  /** whether this is the only turn running now (its appends are then written on the event loop) */
  alone(): boolean;
}

function elapsedSec(started: number): number {
  return Math.round(performance.now() - started) / 1000;
}

@Injectable()
export class TurnPipeline {
  private readonly logger = new Logger(CHAT_LOGGER);
  /** integer stream ids, unique per turn (time-seeded so they don't repeat across restarts) */
  private nextStreamId = Date.now();

  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    @Inject(HISTORY_LOG) private readonly memory: HistoryLog,
    private readonly runner: AgentRunner,
    private readonly prompt: SystemPromptBuilder,
    private readonly eventBus: AppEventBus,
    private readonly skills: SkillTurnService,
    private readonly mcp: McpService,
    private readonly titles: ChatTitleService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly attachments: AttachmentsService,
    private readonly persistence: TurnPersistence,
  ) {}

  /** Runs a turn of the lanes to its end (its log is set before the first await, for connections attaching mid-turn). */
  run(job: TurnJob, running: RunningTurn, out: TurnOutlet): Promise<void> {
    const turnId = randomBytes(16).toString('hex');
    const streamId = this.nextStreamId++;
    running.log = new TurnEventLog(job.chatId, streamId, { content: job.content, metadata: job.metadata });
    return this.turn(job, running, out, turnId, streamId, logIds({ chatId: job.chatId, turnId }));
  }

  private async turn(job: TurnJob, running: RunningTurn, out: TurnOutlet, turnId: string, streamId: number, ids: LogIds): Promise<void> {
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
      out.emit({
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
      failedUser = plan?.kind === 'continue' ? null : { content, ...(job.source ? { source: job.source } : {}) };

      // automatic title: only for an untitled chat without history; survives a failure of this turn. The model
      // writes a better one after the turn succeeded (chat-title.ts).
      if (!plan && !chat.metadata.title && chat.history.length === 0) {
        autoTitle = fallbackTitle(content);
        await this.persistence.saveFallbackTitle(chatId, chat.metadata, autoTitle);
        out.emit({
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
        keepToolResultsTurns: this.config.contextKeepToolResultsTurns,
        signal,
        attachments: attachments.map(({ name, path, size, mime }) => ({ name, path, size, mime })),
        ...(job.untrustedSources ? { untrustedSources: job.untrustedSources } : {}),
      });
      const { skillReceipts } = context;
      const user = job.source ? { ...context.user, source: job.source } : context.user;
      for (const warning of context.warnings) out.emit({ event: 'warning', chat_id: chatId, ...warning });
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
          ...(job.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
          ...(job.toolAllowlist ? { toolAllowlist: job.toolAllowlist } : {}),
          acceptsImages,
          userImages,
          listener: turnEventsListener(chatId, streamId, (event) => out.emit(event)),
        });
      } catch (err) {
        if (err instanceof AgentCancelledError) {
          const partial = { ...err.partial, durable: [...skillReceipts, ...err.partial.durable] };
          await this.finishCancelled(job, out, running.cause ?? 'client', partial, user, streamId, started, ids);
          return;
        }
        throw err;
      }

      // explicit Skill receipts come first among the turn's durable messages
      outcome = { ...outcome, durable: [...skillReceipts, ...outcome.durable] };
      // persist, then stream_end and done (done only after the turn is on disk)
      const final = {
        content: outcome.content,
        ...(outcome.reasoning !== undefined ? { reasoning: outcome.reasoning } : {}),
        ...(outcome.truncated ? { truncated: true } : {}),
        ...answerStats(outcome.usage, started, outcome.cost),
      };
      const written = await this.persistence.persist(job, user, outcome.durable, final, out.alone());
      const durationSec = elapsedSec(started);
      const end = {
        durationSec,
        usage: outcome.usage,
        cancelled: false,
        ...(outcome.cost ? { cost: outcome.cost } : {}),
        ...(outcome.truncated ? { truncated: true } : {}),
      };
      for (const event of withCursors(turnEndEvents(chatId, streamId, end), written)) out.emit(event);
      if (autoTitle !== null && this.config.modelTitles) {
        this.requestModelTitle(out, chatId, autoTitle, content, outcome.content, selection);
      }
      this.logger.log(
        formatEvent('agent.turn.completed', {
          duration_ms: Math.round(durationSec * 1000),
          model_calls: outcome.modelCalls,
          tool_calls: outcome.toolCalls,
          failed_tool_calls: outcome.failedToolCalls,
          iteration_limit_reached: outcome.iterationLimitReached,
          runaway: outcome.runaway?.reason,
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
          ...(outcome.runaway ? { runawayStopped: true } : {}),
        },
        ids,
      );
    } catch (err) {
      await this.failTurn(out, chatId, err, metadataBefore, failedUser, ids, plan?.supersedes);
    } finally {
      this.skills.endTurn(chatId, turnId);
      lease.release();
    }
  }

  private async finishCancelled(
    job: TurnJob,
    out: TurnOutlet,
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
        const final = {
          content: partial.content,
          cancelled: true,
          ...(partial.reasoning !== undefined ? { reasoning: partial.reasoning } : {}),
          ...answerStats(partial.usage, started, partial.cost),
        };
        written = await this.persistence.persist(job, user, partial.durable, final, out.alone());
        persisted = true;
      } catch (err) {
        this.logger.error(formatEvent('agent.turn.persist_failed', { cancelled: true, error_type: errorType(err) }), ids);
      }
    }
    const durationSec = elapsedSec(started);
    this.logger.log(
      formatEvent('agent.turn.cancelled', {
        cause,
        duration_ms: Math.round(durationSec * 1000),
        partial_persisted: persisted,
      }),
      ids,
    );
    const end = { durationSec, usage: partial.usage, cancelled: true, ...(partial.cost ? { cost: partial.cost } : {}) };
    for (const event of withCursors(turnEndEvents(chatId, streamId, end), written)) out.emit(event);
  }

  /**
   * One clear error for the turn; metadata goes back to its pre-turn state except the title. A failed model call keeps
   * the user message in history with an `error` marker (the same code and safe detail as the event) so a reload shows
   * it; other failures (a selection that cannot be honoured, an internal error) persist nothing.
   */
  private async failTurn(
    out: TurnOutlet,
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
    if (metadataBefore) await this.persistence.restoreMetadata(chatId, metadataBefore, ids);
    // a refused model call (spend limit) and a turn the runaway guard stopped are kept like a failed model call: the
    // user message with its error
    if (user && (err instanceof ModelCallError || err instanceof SpendLimitError || err instanceof RunawayStoppedError)) {
      await this.persistence.persistFailed(chatId, user, { kind: code, message: detail }, out.alone(), ids, supersedes);
    }
    out.emit({
      event: 'error',
      chat_id: chatId,
      detail,
      code,
      ...(err instanceof SpendLimitError ? { limit: err.limit } : {}),
    });
  }

  /** Off the turn's critical path: the model's title replaces the fallback (unless renamed), then `session_updated`. */
  private requestModelTitle(
    out: TurnOutlet,
    chatId: string,
    fallback: string,
    userContent: string,
    answer: string,
    chatModel: TurnJob['metadata']['llm'],
  ): void {
    void this.titles.improve({ chatId, fallback, userContent, answer, chatModel }).then((title) => {
      if (title === null) return;
      out.emit({ event: 'session_updated', chat_id: chatId, title, updated_at: localIsoWithOffset(new Date()) });
    });
  }

  private publishCompleted(event: TurnCompletedEvent, ids: LogIds): void {
    try {
      this.eventBus.emit(TURN_COMPLETED_EVENT, event);
    } catch (err) {
      this.logger.error(formatEvent('agent.turn.listener_failed', { error_type: errorType(err) }), ids);
    }
  }
}
