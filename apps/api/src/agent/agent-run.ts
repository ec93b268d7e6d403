/**
 * The shapes of one run of the agent loop (openspec agent-runner): what a caller asks for (RunRequest) and hears while
 * it runs (RunnerListener), what a tool call of it sees (ActiveRun), and how it ends (RunOutcome, or
 * AgentCancelledError with the part that may be persisted). Apart from the loop (agent-runner.ts) so that the files
 * of the loop and the callers share them without importing each other.
 */
import type { LlmProvider, Money, TokenUsage, UntrustedSource } from '@cashcode/contracts';
import type { ChatMessage } from '../memory/memory.types';
import type { ProviderClient } from '../llm-settings/provider-client';
import type { RunawayLimits, RunawayTrip } from './runaway-guard';
import type { ChildRun, SubagentNotice } from './subagents/child-run';
import type { ToolListener } from './tool-executor';
import type { TurnRequester } from './tool-gate';
import type { ToolAllowlist } from './tool-registry';
import type { UntrustedContext } from './untrusted-context';
import type { UserImage } from './wire-messages';

/**
 * What the runner reports while it works, synchronously, as things happen: the answer's text, the model's reasoning
 * (apart from the text) and its tool calls.
 */
export interface RunnerListener extends ToolListener {
  delta(text: string): void;
  reasoning?(text: string): void;
  /** a sub-agent started by one of the turn's `delegate` calls started, did something, or ended (openspec subagents) */
  subagent?(notice: SubagentNotice): void;
}

export interface RunRequest {
  client: ProviderClient;
  provider: LlmProvider;
  model: string;
  /** system prompt(s) + previous history + the new user message */
  messages: readonly ChatMessage[];
  chatId: string;
  turnId: string;
  signal: AbortSignal;
  /** `mcp_*` tools visible for this turn only */
  temporaryTools?: ReadonlySet<string>;
  /** the only tools the turn may see and run (an automation's subset); absent: every tool */
  toolAllowlist?: ToolAllowlist;
  /**
   * whether the model takes image input (from the LLM settings of the model); tool images then follow the tool
   * messages as a user message with `image_url` parts (this turn only). Default false: placeholders only.
   */
  acceptsImages?: boolean;
  /**
   * no one can answer this turn's questions (the OpenAI-compatible endpoint, openspec openai-compat): a call whose
   * policy is `ask` is denied at once with a clear result (unless a rule or Skill pre-approves it) and MCP elicitations
   * are declined. Default false.
   */
  headless?: boolean;
  /**
   * what the turn's model calls are recorded as in the usage ledger (openspec usage): `chat` (default) for a turn of a
   * chat, `api` for a stateless OpenAI-compatible request (recorded without its throwaway chat id)
   */
  purpose?: 'chat' | 'api' | 'subagent';
  /** sampling options of the client's request, passed to every model call of the turn when set */
  temperature?: number;
  maxTokens?: number;
  /**
   * images attached to the new user message (base64); with `acceptsImages` they are sent as `image_url` parts of the
   * last user message (this turn only, never persisted), else they are left out
   */
  userImages?: readonly UserImage[];
  /** stricter runaway-guard limits for this turn (an automation's, a child run's); default: the configuration's */
  runaway?: Partial<RunawayLimits>;
  listener: RunnerListener;
  /** a sub-agent's run (openspec subagents, agent/subagents/): its place, tools and limit */
  child?: ChildRun;
  /** untrusted content the run starts with besides its history's (a child gets its parent's) */
  untrustedSources?: readonly UntrustedSource[];
  /** who the turn answers (absent: the owner); a child gets its parent's */
  requester?: TurnRequester;
}

/** A run in progress as a tool call of it sees it (a `delegate` call starts its child from it). */
export interface ActiveRun {
  readonly request: RunRequest;
  /** 0 for a chat turn, the child's depth for a sub-agent */
  readonly depth: number;
  /** the tools its model was offered for the current round of calls */
  tools: readonly string[];
  /** the untrusted content in its context */
  readonly untrusted: UntrustedContext;
  /** adds a sub-agent's model calls to the run's usage and cost (null cost: a call without a price) */
  absorb(usage: TokenUsage, cost: Money | null): void;
}

export interface RunOutcome {
  /** the final answer */
  content: string;
  /** the model's reasoning over the whole turn (every call's, in order); absent when it sent none */
  reasoning?: string;
  /** the last model call stopped at its output limit: the answer is cut short (a `continue` carries on) */
  truncated?: boolean;
  /** assistant tool-call messages and tool results (persisted projections) of this turn, in order */
  durable: ChatMessage[];
  usage: TokenUsage;
  /** the summed cost of the turn's model calls when every one of them had a price (openspec usage) */
  cost?: Money;
  /** model calls made */
  modelCalls: number;
  iterationLimitReached: boolean;
  /** the runaway guard stopped the tool calls and the model answered after its instruction (runaway-guard.ts) */
  runaway?: RunawayTrip;
  toolCalls: number;
  failedToolCalls: number;
  /** the untrusted content the run had in its context at its end (a sub-agent's answer carries it to its parent) */
  untrustedSources?: UntrustedSource[];
}

/** The part of a cancelled turn that may be persisted. */
export interface PartialTurn {
  /** text streamed by the model call that was running (after the last complete tool round) */
  content: string;
  /** whether any delta reached the client during the turn */
  streamed: boolean;
  /** the reasoning streamed during the turn (absent: none) */
  reasoning?: string;
  /** complete tool rounds only (an assistant tool-call message always with all of its results) */
  durable: ChatMessage[];
  usage: TokenUsage;
  cost?: Money;
}

export class AgentCancelledError extends Error {
  constructor(readonly partial: PartialTurn) {
    super('The turn was cancelled.');
    this.name = 'AgentCancelledError';
  }
}

/**
 * A sub-agent's run failed (a model error, a spend limit, its token budget): `reason` is what the loop threw, `partial`
 * what the child had done by then (its account, transcript and usage for its parent).
 */
export class ChildRunFailedError extends Error {
  constructor(
    readonly reason: unknown,
    readonly partial: PartialTurn,
  ) {
    super(reason instanceof Error ? reason.message : 'The sub-agent failed.');
    this.name = 'ChildRunFailedError';
  }
}
