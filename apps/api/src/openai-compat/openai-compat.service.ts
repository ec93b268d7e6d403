/**
 * The agent behind the OpenAI-compatible endpoint (openspec openai-compat): one turn, reported to a sink as it happens.
 * Which model a model id runs is openai-compat-models.ts; how many turns and new chats may run, openai-compat-admission.ts.
 *
 * - Stateless (default): the request's messages are the context, after CashCode's own system prompt (SOUL, memory,
 *   the Skills index), and nothing is persisted. Each turn has its own throwaway chat id (`openai-<hex>`); whatever
 *   its tools stored under it is removed when the turn ends.
 * - A chat (`X-CashCode-Chat-Id`, or `user` mapped to `openai-user-<hash>` when that setting is on): the last user
 *   message runs through ChatService exactly like a WebSocket turn (persisted, shown in the console, live to the
 *   chat's subscribers); the request's earlier messages are ignored, the chat's history is the context.
 * - Headless: a tool whose policy is `ask` is denied at once with a clear result, elicitations are declined.
 * - Spend limits (openspec usage): `admit` refuses a turn whose model already reached a limit, and every model call
 *   of a turn is checked before it is made (AgentRunner, or ChatService for a chat); a refusal is an OpenAI-style 429
 *   with code `spend_limit_reached` and a Retry-After until the limit's window restarts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { HttpStatus, Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { filter } from 'rxjs';
import { CHAT_ID_PATTERN, type LlmSelection, type ServerEvent, type TokenUsage } from '@cashcode/contracts';
import { AgentCancelledError, AgentRunner, ModelCallError } from '../agent/agent-runner';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { ChatService } from '../chat/chat.service';
import { SESSION_DELETED_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { ChatDirectoryStore } from '../memory/chat-directory.store';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { LLM_CLIENT_PROVIDER, LlmNotConfiguredError, type LlmClientProvider } from '../llm-settings/llm-provider';
import { SkillTurnService } from '../skills/skill-turn.service';
import type { CompletionRequest } from './completion-request';
import { TurnAdmission } from './openai-compat-admission';
import { chatTurnError, notConfigured, spendLimitError, upstreamError } from './openai-compat-errors';
import { OpenAiCompatSettingsService } from './openai-compat-settings.service';
import { invalidRequest, OpenAiError } from '../common/openai-error';
import { SpendLimitError } from '../usage/usage.errors';
import { RunawayStoppedError } from '../agent/runaway-guard';
import { UsageService } from '../usage/usage.service';

/** What a turn reports while it runs. */
export interface TurnSink {
  /** answer text as the model streams it */
  delta(text: string): void;
  /** the model's reasoning as it streams it (never part of the answer text) */
  reasoning?(text: string): void;
  /** a tool call started (progress text, when enabled) */
  toolCall?(name: string): void;
  /**
   * the turn has its answer: called synchronously as soon as it is known (before the clean-up that follows and before
   * the returned promise settles), so the response can end without waiting for work the client does not need
   */
  done?(result: TurnResult): void;
}

export interface TurnResult {
  /** the final answer (the text of the last model call) */
  content: string;
  /** the model's reasoning during the turn, its model calls one paragraph each ('' without) */
  reasoning: string;
  usage: TokenUsage;
}

/** How the turn of a request is run: stateless, or as a turn of a CashCode chat. */
export type Conversation = { kind: 'stateless' } | { kind: 'chat'; chatId: string };

/** The chat a `user` string maps to: stable, and no longer than a chat id may be. */
export function chatIdForUser(user: string): string {
  return `openai-user-${createHash('sha256').update(user, 'utf8').digest('hex').slice(0, 32)}`;
}

@Injectable()
export class OpenAiCompatService implements OnModuleDestroy {
  private readonly logger = new Logger(OpenAiCompatService.name);
  private readonly admission = new TurnAdmission();
  private stopping = false;

  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    private readonly settings: OpenAiCompatSettingsService,
    private readonly runner: AgentRunner,
    private readonly prompt: SystemPromptBuilder,
    private readonly skills: SkillTurnService,
    private readonly chat: ChatService,
    private readonly history: ChatDirectoryStore,
    private readonly eventBus: AppEventBus,
    private readonly usage: UsageService,
  ) {}

  onModuleDestroy(): void {
    this.stopping = true;
  }

  /** Which conversation a request runs in (validated like the WebSocket path validates chat ids). */
  conversation(request: CompletionRequest, chatHeader: string | string[] | undefined): Conversation {
    if (chatHeader !== undefined) {
      const value = Array.isArray(chatHeader) ? chatHeader[0] : chatHeader;
      if (typeof value !== 'string' || !CHAT_ID_PATTERN.test(value)) {
        throw invalidRequest(
          'invalid_chat_id',
          'Invalid X-CashCode-Chat-Id: expected 1 to 64 characters of letters, digits, _, : and -.',
          'X-CashCode-Chat-Id',
        );
      }
      return { kind: 'chat', chatId: value };
    }
    if (request.user !== undefined && this.settings.mapUserToChat) return { kind: 'chat', chatId: chatIdForUser(request.user) };
    return { kind: 'stateless' };
  }

  /**
   * Runs one turn; resolves with the final answer, rejects with an OpenAiError (or AgentCancelledError when the
   * signal aborted: the client went away).
   */
  async run(
    request: CompletionRequest,
    selection: LlmSelection,
    conversation: Conversation,
    sink: TurnSink,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    this.admit(request, selection, conversation);
    // taken before anything is awaited, so parallel requests cannot all pass the check
    const release = this.admission.takeSlot();
    try {
      if (conversation.kind === 'chat') {
        const chatId = conversation.chatId;
        if (!this.chat.isRunning(chatId) && !(await this.history.chatExists(chatId))) this.admission.admitNewChat();
        return await this.runChatTurn(request, selection, conversation.chatId, sink, signal);
      }
      return await this.runStateless(request, selection, sink, signal);
    } finally {
      release();
    }
  }

  /**
   * Whether a turn may start now: 503 while the server stops; 429 `spend_limit_reached` when a limit covering the
   * model is already used up (each model call is still checked with its own estimate when it is made).
   */
  private admit(_request: CompletionRequest, selection: LlmSelection, conversation: Conversation): void {
    if (this.stopping) {
      throw new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'shutting_down', 'The server is shutting down.');
    }
    const reached = this.usage.reachedLimit(selection.provider, selection.model, conversation.kind === 'chat' ? 'chat' : 'api');
    if (reached) {
      const refusal = new SpendLimitError(reached);
      throw spendLimitError(refusal.message, reached.resets_at);
    }
  }

  private async runStateless(
    request: CompletionRequest,
    selection: LlmSelection,
    sink: TurnSink,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    let lease;
    try {
      lease = this.llm.acquire(selection.provider);
    } catch (err) {
      throw notConfigured(err instanceof LlmNotConfiguredError ? err.message : 'The model provider is not available right now.');
    }
    const chatId = `openai-${randomBytes(12).toString('hex')}`;
    const turnId = randomBytes(16).toString('hex');
    const ids = logIds({ chatId, turnId });
    const started = performance.now();
    try {
      const system = await this.prompt.build({ chatId });
      const outcome = await this.runner.run({
        client: lease.client,
        provider: selection.provider,
        model: selection.model,
        messages: [{ role: 'system', content: system }, ...request.messages],
        chatId,
        turnId,
        signal,
        headless: true,
        purpose: 'api',
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
        listener: {
          delta: (text) => sink.delta(text),
          reasoning: (text) => sink.reasoning?.(text),
          toolCall: (notice) => sink.toolCall?.(notice.name),
          toolResult: () => undefined,
        },
      });
      this.logger.log(
        formatEvent('openai.turn.completed', {
          duration_ms: Math.round(performance.now() - started),
          model_calls: outcome.modelCalls,
          tool_calls: outcome.toolCalls,
          total_tokens: outcome.usage.total_tokens,
        }),
        ids,
      );
      const result = { content: outcome.content, reasoning: outcome.reasoning ?? '', usage: outcome.usage };
      sink.done?.(result);
      return result;
    } catch (err) {
      if (err instanceof AgentCancelledError) {
        this.logger.log(formatEvent('openai.turn.cancelled', { duration_ms: Math.round(performance.now() - started) }), ids);
        throw err;
      }
      if (err instanceof ModelCallError) {
        this.logger.warn(formatEvent('openai.turn.failed', { error_kind: err.code }), ids);
        throw upstreamError(err.code, err.message);
      }
      if (err instanceof SpendLimitError) {
        this.logger.warn(formatEvent('openai.turn.refused', { error_kind: err.code, limit: err.limit.id }), ids);
        throw spendLimitError(err.message, err.limit.resets_at);
      }
      // the same OpenAI error a chat turn's `runaway_stopped` event becomes
      if (err instanceof RunawayStoppedError) throw chatTurnError(err.code, err.message);
      throw err;
    } finally {
      this.skills.endTurn(chatId, turnId);
      lease.release();
      await this.forget(chatId, ids);
    }
  }

  /**
   * A stateless turn leaves nothing behind: what its tools stored under the throwaway chat id (a loaded Skill, an
   * activated MCP tool) is removed, and the modules that keep per-chat state are told (the session.deleted event).
   */
  private async forget(chatId: string, ids: ReturnType<typeof logIds>): Promise<void> {
    try {
      if (await this.history.chatExists(chatId)) await this.history.deleteChat(chatId);
      this.eventBus.emit(SESSION_DELETED_EVENT, { chatId });
    } catch (err) {
      this.logger.warn(formatEvent('openai.turn.cleanup_failed', { error_type: err instanceof Error ? err.name : typeof err }), ids);
    }
  }

  /** The last user message as a turn of a CashCode chat, through ChatService (persisted like a WebSocket turn). */
  private runChatTurn(
    request: CompletionRequest,
    selection: LlmSelection,
    chatId: string,
    sink: TurnSink,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    const last = request.messages.at(-1);
    if (!last || last.role !== 'user' || last.content.trim() === '') {
      throw invalidRequest(
        'invalid_value',
        'With a CashCode chat the last message must be a non-empty user message: it is the one added to the chat.',
        `messages[${request.messages.length - 1}]`,
      );
    }
    if (this.chat.isRunning(chatId)) {
      throw new OpenAiError(
        HttpStatus.TOO_MANY_REQUESTS,
        'rate_limit_error',
        'chat_busy',
        'A turn of this CashCode chat is running; retry when it has finished.',
        null,
        { 'Retry-After': '1' },
      );
    }
    return new Promise<TurnResult>((resolve, reject) => {
      // the content of the model call in progress; a tool call starts a new one
      let content = '';
      // the turn's reasoning, as the chat's `reasoning` events bring it (already one paragraph per model call)
      let reasoning = '';
      let settled = false;
      const subscription = this.chat.events$.pipe(filter((outbound) => outbound.chatId === chatId)).subscribe({
        next: ({ event }) => onEvent(event),
        complete: () => finish(() => reject(new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'shutting_down', 'The server is shutting down.'))),
      });
      const onAbort = () => {
        if (!settled) this.chat.cancel(chatId);
      };
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        subscription.unsubscribe();
        signal.removeEventListener('abort', onAbort);
        settle();
      };
      const onEvent = (event: ServerEvent) => {
        switch (event.event) {
          case 'delta':
            content += event.text;
            sink.delta(event.text);
            return;
          case 'reasoning':
            reasoning += event.text;
            sink.reasoning?.(event.text);
            return;
          case 'tool_call':
            content = '';
            sink.toolCall?.(event.tool_name);
            return;
          case 'done':
            finish(() => {
              if (event.cancelled) {
                reject(new AgentCancelledError({ content, streamed: true, durable: [], usage: event.usage }));
                return;
              }
              const result = { content, reasoning, usage: event.usage };
              // at once, inside the chat service's emit: not after the turn's own follow-up work
              sink.done?.(result);
              resolve(result);
            });
            return;
          case 'error':
            finish(() => reject(chatTurnError(event.code ?? 'internal_error', event.detail, event.limit?.resets_at)));
            return;
          default:
            return;
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const result = this.chat.submit(chatId, last.content, { llm: selection }, [], { headless: true });
      if (!result.accepted) finish(() => reject(chatTurnError(result.code, result.detail)));
    });
  }
}
