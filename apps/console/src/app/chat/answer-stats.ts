/**
 * Tokens and duration of answers (openspec console "Requirement: Tokens and duration"): what `done` adds to the answer
 * it ends, and the per-chat total. Pure functions over the thread; the views format them.
 */
import type { ServerEvent, TokenUsage } from '@cashcode/contracts';

import { addMoney, isMoney } from '../usage/usage-format';
import type { ChatMessage, ChatThread } from './chat-types';

type DoneEvent = Extract<ServerEvent, { event: 'done' }>;

/** A usage the provider actually reported (all zeros or malformed: unknown). */
export function reportedUsage(value: unknown): TokenUsage | null {
  if (typeof value !== 'object' || value === null) return null;
  const usage = value as Record<string, unknown>;
  const counts = [usage['prompt_tokens'], usage['completion_tokens'], usage['total_tokens']];
  if (!counts.every((count) => typeof count === 'number' && Number.isFinite(count) && count >= 0)) return null;
  const [prompt, completion, total] = counts as number[];
  if (prompt === 0 && completion === 0 && total === 0) return null;
  const reported: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
  // prompt tokens served from the provider's cache, only when it said (absent: unknown)
  const cached = usage['cached_tokens'];
  if (typeof cached === 'number' && Number.isFinite(cached) && cached >= 0) reported.cached_tokens = cached;
  return reported;
}

function addUsage(a: TokenUsage | undefined, b: TokenUsage | null): TokenUsage | undefined {
  if (!b) return a;
  if (!a) return b;
  const sum: TokenUsage = {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
  if (a.cached_tokens !== undefined || b.cached_tokens !== undefined) sum.cached_tokens = (a.cached_tokens ?? 0) + (b.cached_tokens ?? 0);
  return sum;
}

/**
 * The answer `done` ends (the last assistant message after the last user message) takes the turn's usage, cost and
 * duration; a continued answer (`resumed`) adds them to what it had.
 */
export function applyDoneStats(thread: ChatThread, event: DoneEvent): ChatThread {
  const messages = thread.messages;
  const index = messages.length - 1;
  if (index < 0 || messages[index].role !== 'assistant') return thread;
  const answer = messages[index];
  const usage = reportedUsage(event.usage);
  const durationMs = typeof event.duration_sec === 'number' ? Math.round(event.duration_sec * 1000) : null;
  const cost = isMoney(event.cost) ? event.cost : undefined;
  const updated: ChatMessage = { ...answer, resumed: undefined, truncated: event.truncated === true ? true : undefined };
  if (answer.resumed) {
    updated.usage = addUsage(answer.usage, usage);
    updated.cost = addMoney(answer.cost, cost);
    if (durationMs !== null) updated.durationMs = (answer.durationMs ?? 0) + durationMs;
  } else {
    updated.usage = usage ?? undefined;
    updated.cost = cost;
    if (durationMs !== null) updated.durationMs = durationMs;
  }
  const next = [...messages];
  next[index] = updated;
  return { ...thread, messages: next };
}

export interface ChatTotals {
  /** total tokens of the answers that reported usage */
  tokens: number;
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  /** answers with a known duration */
  answers: number;
}

/** The per-chat total over the answers shown (the current branch). */
export function chatTotals(messages: readonly ChatMessage[]): ChatTotals {
  const totals: ChatTotals = { tokens: 0, promptTokens: 0, completionTokens: 0, durationMs: 0, answers: 0 };
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    if (message.usage) {
      totals.tokens += message.usage.total_tokens;
      totals.promptTokens += message.usage.prompt_tokens;
      totals.completionTokens += message.usage.completion_tokens;
    }
    if (typeof message.durationMs === 'number') {
      totals.durationMs += message.durationMs;
      totals.answers++;
    }
  }
  return totals;
}

/** Seconds with one decimal below a minute, whole seconds above (`0.8`, `12.4`, `75`). */
export function formatSeconds(durationMs: number): string {
  const seconds = durationMs / 1000;
  return seconds < 60 ? seconds.toFixed(1) : String(Math.round(seconds));
}
