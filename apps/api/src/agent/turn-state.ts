/**
 * The bookkeeping of one run of the agent loop (agent-runner.ts): its usage, cost, counts, reasoning and persisted
 * messages as they grow, and what they make at its end — the RunOutcome, or the PartialTurn a cancel keeps.
 */
import type { Money, TokenUsage } from '@cashcode/contracts';
import { logIds, type LogIds } from '../common/log-context';
import type { ChatMessage } from '../memory/memory.types';
import type { PartialTurn, RunOutcome } from './agent-run';
import type { UntrustedContext } from './untrusted-context';

/** Mutable state of one turn, shared by the loop and the cancellation path. */
export interface TurnState {
  usage: TokenUsage;
  durable: ChatMessage[];
  /** text of the model call in progress */
  currentContent: string;
  /** reasoning of the turn so far (the calls joined by a blank line) */
  reasoning: string;
  /** whether the call in progress has reasoning yet (a new call's reasoning starts a new paragraph) */
  callReasoned: boolean;
  streamed: boolean;
  usedCallIds: Set<string>;
  /** the turn's chat and turn ids for its log lines */
  ids: LogIds;
  /** summed cost of the recorded calls; null once a call had no price */
  cost: Money | null | undefined;
  /** model calls made, tool calls run and those of them that failed */
  counts: { modelCalls: number; toolCalls: number; failedToolCalls: number };
}

export function emptyUsage(): TokenUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

export function newTurnState(chatId: string, turnId: string): TurnState {
  return {
    usage: emptyUsage(),
    durable: [],
    currentContent: '',
    reasoning: '',
    callReasoned: false,
    streamed: false,
    usedCallIds: new Set(),
    ids: logIds({ chatId, turnId }),
    cost: undefined,
    counts: { modelCalls: 0, toolCalls: 0, failedToolCalls: 0 },
  };
}

export function addUsage(total: TokenUsage, usage: TokenUsage | null): void {
  if (!usage) return;
  total.prompt_tokens += usage.prompt_tokens;
  total.completion_tokens += usage.completion_tokens;
  total.total_tokens += usage.total_tokens;
  // only when the provider reports it: absent means unknown
  if (usage.cached_tokens !== undefined) total.cached_tokens = (total.cached_tokens ?? 0) + usage.cached_tokens;
  if (usage.cache_write_tokens !== undefined) total.cache_write_tokens = (total.cache_write_tokens ?? 0) + usage.cache_write_tokens;
}

/** Adds a settled call's cost to the turn's; a call without a price (or in another currency) leaves the turn without. */
export function addCost(state: TurnState, cost: Money | null): void {
  if (state.cost === null) return;
  if (cost === null || (state.cost && state.cost.currency !== cost.currency)) {
    state.cost = null;
    return;
  }
  state.cost = { amount: Math.round(((state.cost?.amount ?? 0) + cost.amount) * 1e9) / 1e9, currency: cost.currency };
}

/** The outcome of a run that ended with `content` (its final answer). */
export function buildOutcome(
  state: TurnState,
  untrusted: UntrustedContext,
  content: string,
  iterationLimitReached: boolean,
  truncated = false,
): RunOutcome {
  return {
    content,
    ...(state.reasoning !== '' ? { reasoning: state.reasoning } : {}),
    ...(truncated ? { truncated: true } : {}),
    durable: state.durable,
    usage: state.usage,
    ...(state.cost ? { cost: state.cost } : {}),
    ...state.counts,
    iterationLimitReached,
    untrustedSources: untrusted.sources,
  };
}

/** What a cancelled run keeps: the text of the call that was running and the complete tool rounds. */
export function partialTurn(state: TurnState): PartialTurn {
  return {
    content: state.currentContent,
    streamed: state.streamed,
    ...(state.reasoning !== '' ? { reasoning: state.reasoning } : {}),
    durable: state.durable,
    usage: state.usage,
    ...(state.cost ? { cost: state.cost } : {}),
  };
}
