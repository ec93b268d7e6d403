/**
 * Pending MCP elicitations (form mode) of running tool calls (openspec mcp "Requirement: Elicitation"): a request
 * becomes an `elicitation_request` event and waits for the user's `elicitation` frame, like an approval card. Without
 * an attached client the answer is `decline`; the approval timeout and the end of the turn answer `cancel`. Accepted
 * content is validated against the requested schema.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type {
  ElicitationAction,
  ElicitationRequestEvent,
  ElicitationResolvedEvent,
  ElicitationValue,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** What a server asks (the parameters of `elicitation/create`, form mode). */
export interface ElicitationAsk {
  server: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}

export interface ElicitationOutcome {
  action: ElicitationAction;
  content?: Record<string, ElicitationValue>;
}

export interface ElicitationContext extends ElicitationAsk {
  chatId: string;
  callId: string;
  toolName: string;
  signal: AbortSignal;
  emit(event: ElicitationRequestEvent | ElicitationResolvedEvent): void;
}

interface Pending {
  event: ElicitationRequestEvent;
  settle(outcome: ElicitationOutcome): void;
}

export type ElicitationAnswer = { ok: true } | { ok: false; code: string; detail: string };

const MAX_MESSAGE_CHARS = 2_000;

/** Checks accepted content against a form schema (flat primitive properties); returns the first problem or null. */
export function validateElicitationContent(schema: Record<string, unknown>, content: unknown): string | null {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return 'content must be an object';
  const values = content as Record<string, unknown>;
  const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  for (const name of required) {
    if (values[name] === undefined) return `${name} is required`;
  }
  for (const [name, value] of Object.entries(values)) {
    const property = properties[name];
    if (!property) return `${name} is not a requested field`;
    const type = property['type'];
    const allowed = Array.isArray(property['enum'])
      ? (property['enum'] as unknown[])
      : Array.isArray(property['oneOf'])
        ? (property['oneOf'] as Array<{ const?: unknown }>).map((option) => option.const)
        : null;
    if (type === 'string') {
      if (typeof value !== 'string') return `${name} must be a string`;
      if (allowed && !allowed.includes(value)) return `${name} must be one of ${allowed.join(', ')}`;
      if (typeof property['minLength'] === 'number' && value.length < property['minLength']) return `${name} is too short`;
      if (typeof property['maxLength'] === 'number' && value.length > property['maxLength']) return `${name} is too long`;
    } else if (type === 'number' || type === 'integer') {
      if (typeof value !== 'number' || !Number.isFinite(value)) return `${name} must be a number`;
      if (type === 'integer' && !Number.isInteger(value)) return `${name} must be an integer`;
      if (typeof property['minimum'] === 'number' && value < property['minimum']) return `${name} must be at least ${property['minimum']}`;
      if (typeof property['maximum'] === 'number' && value > property['maximum']) return `${name} must be at most ${property['maximum']}`;
    } else if (type === 'boolean') {
      if (typeof value !== 'boolean') return `${name} must be true or false`;
    } else if (type === 'array') {
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) return `${name} must be a list of strings`;
      const items = (property['items'] ?? {}) as Record<string, unknown>;
      const options = Array.isArray(items['enum'])
        ? (items['enum'] as unknown[])
        : Array.isArray(items['anyOf'])
          ? (items['anyOf'] as Array<{ const?: unknown }>).map((option) => option.const)
          : null;
      if (options && value.some((item) => !options.includes(item))) return `${name} must be chosen from ${options.join(', ')}`;
      if (typeof property['minItems'] === 'number' && value.length < property['minItems']) return `${name} needs more choices`;
      if (typeof property['maxItems'] === 'number' && value.length > property['maxItems']) return `${name} has too many choices`;
    }
  }
  return null;
}

@Injectable()
export class ElicitationsService {
  private readonly logger = new Logger(ElicitationsService.name);
  private readonly pending = new Map<string, Pending>();
  /** whether a client follows the chat (set by the chat gateway); without it nobody can answer */
  private audience: (chatId: string) => boolean = () => false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  setAudience(audience: (chatId: string) => boolean): void {
    this.audience = audience;
  }

  /** Asks the user; resolves with the answer, `decline` without a client, `cancel` on timeout or cancellation. */
  request(ctx: ElicitationContext): Promise<ElicitationOutcome> {
    if (!this.audience(ctx.chatId)) {
      this.logger.log(formatEvent('mcp.elicitation.declined', { server: ctx.server, reason: 'no_client' }));
      return Promise.resolve({ action: 'decline' });
    }
    if (ctx.signal.aborted) return Promise.resolve({ action: 'cancel' });
    const id = `elicit_${randomBytes(12).toString('hex')}`;
    const timeoutSec = this.config.approvalTimeoutSec;
    const event: ElicitationRequestEvent = {
      event: 'elicitation_request',
      chat_id: ctx.chatId,
      elicitation_id: id,
      call_id: ctx.callId,
      tool_name: ctx.toolName,
      server: ctx.server,
      message: Array.from(ctx.message).slice(0, MAX_MESSAGE_CHARS).join(''),
      requested_schema: ctx.requestedSchema,
      timeout_sec: timeoutSec,
    };
    return new Promise<ElicitationOutcome>((resolve) => {
      const settle = (outcome: ElicitationOutcome) => {
        if (!this.pending.delete(`${ctx.chatId}\u0000${id}`)) return;
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onAbort);
        ctx.emit({ event: 'elicitation_resolved', chat_id: ctx.chatId, elicitation_id: id, action: outcome.action });
        this.logger.log(formatEvent('mcp.elicitation.resolved', { server: ctx.server, action: outcome.action }));
        resolve(outcome);
      };
      const onAbort = () => settle({ action: 'cancel' });
      const timer = setTimeout(() => settle({ action: 'cancel' }), timeoutSec * 1000);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(`${ctx.chatId}\u0000${id}`, { event, settle });
      ctx.emit(event);
    });
  }

  /** A client's answer (the `elicitation` frame). */
  answer(chatId: string, id: string, action: ElicitationAction, content: unknown): ElicitationAnswer {
    const pending = this.pending.get(`${chatId}\u0000${id}`);
    if (!pending) return { ok: false, code: 'unknown_elicitation', detail: 'No such elicitation is waiting; it may have been answered or timed out.' };
    if (action !== 'accept') {
      pending.settle({ action });
      return { ok: true };
    }
    const problem = validateElicitationContent(pending.event.requested_schema, content ?? {});
    if (problem !== null) return { ok: false, code: 'invalid_elicitation', detail: `The answer does not fit the form: ${problem}.` };
    pending.settle({ action, content: content as Record<string, ElicitationValue> });
    return { ok: true };
  }

  pendingRequests(chatId: string): ElicitationRequestEvent[] {
    return [...this.pending.values()].filter((p) => p.event.chat_id === chatId).map((p) => p.event);
  }
}
