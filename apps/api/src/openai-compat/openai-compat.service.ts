/**
 * The agent behind the OpenAI-compatible endpoint (openspec openai-compat): which model a model id runs, and one
 * turn, reported to a sink as it happens.
 *
 * - Model ids: `cashcode` runs the settings' default model (else the model the last turn used, else the background
 *   model, else the first discovered one); `cashcode:<provider>/<model>` a discovered model of a ready provider.
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
import {
  CHAT_ID_PATTERN,
  LLM_PROVIDERS,
  type LlmProvider,
  type LlmSelection,
  type ServerEvent,
  type TokenUsage,
} from '@cashcode/contracts';
import { AgentCancelledError, AgentRunner, ModelCallError } from '../agent/agent-runner';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { ChatService } from '../chat/chat.service';
import { SESSION_DELETED_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { ChatDirectoryStore } from '../memory/chat-directory.store';
import { logIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { LLM_CLIENT_PROVIDER, LlmNotConfiguredError, type LlmClientProvider } from '../llm-settings/llm-provider';
import { LlmSettingsService } from '../llm-settings/llm-settings.service';
import { SkillTurnService } from '../skills/skill-turn.service';
import type { CompletionRequest } from './completion-request';
import { OpenAiCompatSettingsService } from './openai-compat-settings.service';
import { invalidRequest, OpenAiError } from '../common/openai-error';
import { SpendLimitError } from '../usage/usage.errors';
import { UsageService } from '../usage/usage.service';

export const CASHCODE_MODEL_ID = 'cashcode';
const MODEL_ID_PATTERN = /^cashcode:([a-z_]+)\/(.+)$/;
/** `/v1` turns running at the same time, stateless and chat-bound together; more answer 429 `too_many_turns` */
export const MAX_CONCURRENT_TURNS = 8;
/** chats `/v1` may create (a chat id or mapped user the server does not hold yet) per minute; more answer 429 */
export const MAX_NEW_CHATS_PER_MINUTE = 20;
const NEW_CHAT_WINDOW_MS = 60_000;
/** how long a discovered model list is trusted when checking a model id */
const DISCOVERY_TTL_MS = 30_000;

/** What a turn reports while it runs. */
export interface TurnSink {
  /** answer text as the model streams it */
  delta(text: string): void;
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
  usage: TokenUsage;
}

export interface ModelEntry {
  id: string;
  created: number;
}

/** How the turn of a request is run: stateless, or as a turn of a CashCode chat. */
export type Conversation = { kind: 'stateless' } | { kind: 'chat'; chatId: string };

const SERVER_START = Math.floor(Date.now() / 1000);

function modelId(selection: LlmSelection): string {
  return `cashcode:${selection.provider}/${selection.model}`;
}

function notFound(model: string): OpenAiError {
  return new OpenAiError(
    HttpStatus.NOT_FOUND,
    'invalid_request_error',
    'model_not_found',
    `The model '${model.slice(0, 200)}' does not exist. Use 'cashcode' or one of the ids GET /v1/models lists.`,
    'model',
  );
}

function notConfigured(message: string): OpenAiError {
  return new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'llm_not_configured', message);
}

/** The OpenAI error of a failed model call (the provider error taxonomy): 502, or 504 for a timeout. */
export function upstreamError(code: string, message: string): OpenAiError {
  const timeout = code === 'timeout';
  return new OpenAiError(
    timeout ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY,
    'upstream_error',
    `upstream_${code}`,
    `The model provider failed: ${message}`,
  );
}

/** 429 `spend_limit_reached`: a spend limit refused the turn's model call; retry once its window restarts. */
export function spendLimitError(detail: string, resetsAt?: string): OpenAiError {
  const waitSec = resetsAt ? Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000)) : undefined;
  return new OpenAiError(
    HttpStatus.TOO_MANY_REQUESTS,
    'rate_limit_error',
    'spend_limit_reached',
    detail,
    null,
    waitSec !== undefined && Number.isFinite(waitSec) ? { 'Retry-After': String(waitSec) } : {},
  );
}

/** The OpenAI error for a chat turn's `error` event (the WS codes). */
export function chatTurnError(code: string, detail: string, resetsAt?: string): OpenAiError {
  switch (code) {
    case 'spend_limit_reached':
      return spendLimitError(detail, resetsAt);
    case 'llm_not_configured':
    case 'llm_unavailable':
      return notConfigured(detail);
    case 'queue_full':
      return new OpenAiError(HttpStatus.TOO_MANY_REQUESTS, 'rate_limit_error', 'chat_busy', detail, null, { 'Retry-After': '1' });
    case 'shutting_down':
      return new OpenAiError(HttpStatus.SERVICE_UNAVAILABLE, 'server_error', 'shutting_down', detail);
    case 'auth':
    case 'rate_limit':
    case 'quota':
    case 'timeout':
    case 'context_length':
    case 'transient':
    case 'fatal':
      return upstreamError(code, detail);
    case 'internal_error':
      return new OpenAiError(HttpStatus.INTERNAL_SERVER_ERROR, 'server_error', 'internal_error', detail);
    default:
      return new OpenAiError(HttpStatus.BAD_REQUEST, 'invalid_request_error', code, detail);
  }
}

/** The chat a `user` string maps to: stable, and no longer than a chat id may be. */
export function chatIdForUser(user: string): string {
  return `openai-user-${createHash('sha256').update(user, 'utf8').digest('hex').slice(0, 32)}`;
}

@Injectable()
export class OpenAiCompatService implements OnModuleDestroy {
  private readonly logger = new Logger(OpenAiCompatService.name);
  private running = 0;
  /** when `/v1` created each chat of the last minute (oldest first) */
  private readonly chatsCreated: number[] = [];
  private stopping = false;
  private discovered: { at: number; ids: Set<string> } | null = null;

  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    private readonly llmSettings: LlmSettingsService,
    private readonly settings: OpenAiCompatSettingsService,
    private readonly runner: AgentRunner,
    private readonly prompt: SystemPromptBuilder,
    private readonly skills: SkillTurnService,
    private readonly chat: ChatService,
    private readonly memory: ChatDirectoryStore,
    private readonly eventBus: AppEventBus,
    private readonly usage: UsageService,
  ) {}

  onModuleDestroy(): void {
    this.stopping = true;
  }

  // ---- models --------------------------------------------------------------------------------------------------

  /** `cashcode` and every discovered model of the ready providers. */
  async listModels(): Promise<ModelEntry[]> {
    const listed = await this.llmSettings.listModels();
    const ids = listed.models.map((entry) => modelId({ provider: entry.provider, model: entry.id }));
    this.discovered = { at: Date.now(), ids: new Set(ids) };
    return [CASHCODE_MODEL_ID, ...ids].map((id) => ({ id, created: SERVER_START }));
  }

  /** The model a model id runs; 404 `model_not_found` for an id that names no discovered model. */
  async resolveModel(id: string): Promise<LlmSelection> {
    if (id === CASHCODE_MODEL_ID) {
      const chosen = this.settings.defaultModel ?? this.llm.lastSelection() ?? this.llm.backgroundSelection();
      if (chosen) return chosen;
      const first = (await this.discoveredIds(true))[0];
      const match = first === undefined ? null : MODEL_ID_PATTERN.exec(first);
      if (!match) {
        throw notConfigured(
          'No chat model is chosen for the model id cashcode and none was discovered: configure a provider in Settings > LLM settings, or choose a model in Settings > OpenAI-compatible API.',
        );
      }
      return { provider: match[1] as LlmProvider, model: match[2] as string };
    }
    const match = MODEL_ID_PATTERN.exec(id);
    if (!match || !(LLM_PROVIDERS as readonly string[]).includes(match[1] as string)) throw notFound(id);
    const selection: LlmSelection = { provider: match[1] as LlmProvider, model: match[2] as string };
    if (!this.llm.isReady(selection.provider)) throw notFound(id);
    if ((await this.discoveredIds(false)).includes(id)) return selection;
    // a model added since the last listing: look again once
    if ((await this.discoveredIds(true)).includes(id)) return selection;
    throw notFound(id);
  }

  private async discoveredIds(refresh: boolean): Promise<string[]> {
    if (refresh || !this.discovered || Date.now() - this.discovered.at > DISCOVERY_TTL_MS) {
      await this.listModels();
    }
    return [...(this.discovered?.ids ?? [])];
  }

  // ---- turns ---------------------------------------------------------------------------------------------------

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
    const release = this.takeSlot();
    try {
      if (conversation.kind === 'chat') {
        await this.admitChat(conversation.chatId);
        return await this.runChatTurn(request, selection, conversation.chatId, sink, signal);
      }
      return await this.runStateless(request, selection, sink, signal);
    } finally {
      release();
    }
  }

  /** One of the MAX_CONCURRENT_TURNS slots every `/v1` turn holds while it runs; 429 `too_many_turns` when none is free. */
  private takeSlot(): () => void {
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
  private async admitChat(chatId: string): Promise<void> {
    if (this.chat.isRunning(chatId) || (await this.memory.chatExists(chatId))) return;
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
      const result = { content: outcome.content, usage: outcome.usage };
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
      if (await this.memory.chatExists(chatId)) await this.memory.deleteChat(chatId);
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
              const result = { content, usage: event.usage };
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
