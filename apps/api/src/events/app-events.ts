/**
 * Every in-process event between modules, in one typed map: event name → payload. Publish with AppEventBus.emit and
 * listen with the @OnAppEvent decorator (or AppEventBus.on in tests); both check the payload against this map.
 *
 * This folder imports no feature module (only @cashcode/contracts and common/), so any module may depend on it and
 * a publisher never imports its listeners (chat publishes turn.completed; memory and evolution listen).
 *
 * | event                          | published by                       | listened to by                                |
 * | ------------------------------ | ---------------------------------- | --------------------------------------------- |
 * | turn.completed                 | chat (TurnPipeline)                | memory (Consolidator), evolution (Evaluator)  |
 * | session.deleted                | memory (SessionsService)           | chat, mcp activations, dream, session index   |
 * | memory.consolidation.finished  | memory (Consolidator)              | tests and logs                                |
 * | memory.dream.finished          | memory (DreamService)              | tests and logs                                |
 * | mcp.tools.changed              | mcp (McpConnections)               | skills (availability of `mcp:` requirements)  |
 * | skill_evolution.evaluated      | evolution (EvolutionEvaluator)     | tests and logs                                |
 * | model_call.recorded            | usage (UsageLedger)                | metrics                                       |
 * | server.listening               | bootstrap (createCashcodeApp)      | session index (sync), first-turn warm-up      |
 * | agent.runaway_guard            | agent (AgentRunner)                | metrics                                       |
 * | automation.run_ended           | automations (AutomationRunner)     | metrics                                       |
 */
import type { AutomationRunOutcome, AutomationRunTrigger, DreamTriggerResponse, LlmProvider, TokenUsage, UsageRecord } from '@cashcode/contracts';
import type { ChatMessage } from '../common/chat-message';

export const TURN_COMPLETED_EVENT = 'turn.completed';
export const SESSION_DELETED_EVENT = 'session.deleted';
export const CONSOLIDATION_FINISHED_EVENT = 'memory.consolidation.finished';
export const DREAM_FINISHED_EVENT = 'memory.dream.finished';
export const MCP_TOOLS_CHANGED_EVENT = 'mcp.tools.changed';
export const SKILL_EVOLUTION_EVALUATED_EVENT = 'skill_evolution.evaluated';
export const MODEL_CALL_RECORDED_EVENT = 'model_call.recorded';
export const SERVER_LISTENING_EVENT = 'server.listening';
export const AGENT_RUNAWAY_EVENT = 'agent.runaway_guard';

/** The runaway guard stopped a turn's tool calls (agent/runaway-guard.ts) and the model answered or was stopped. */
export interface AgentRunawayEvent {
  chatId: string;
  turnId: string;
  reason: 'repeated_call' | 'tool_call_ceiling';
  outcome: 'answered' | 'stopped';
}

export const AUTOMATION_RUN_ENDED_EVENT = 'automation.run_ended';

/** An automation run ended (its final record is on disk), a skipped due time included. */
export interface AutomationRunEndedEvent {
  automationId: string;
  outcome: Exclude<AutomationRunOutcome, 'running'>;
  trigger: AutomationRunTrigger;
}

/** After a successful turn has been persisted (not for failed or cancelled turns). */
export interface TurnCompletedEvent {
  chatId: string;
  /** 32-hex turn id (log correlation) */
  turnId: string;
  provider: LlmProvider;
  model: string;
  usage: TokenUsage;
  durationSec: number;
  /** the user's message as sent (untrimmed) */
  userContent: string;
  /** tool-call messages and tool results of the turn (persisted projections) */
  durable: ChatMessage[];
  /** the final answer */
  answer: string;
  toolCalls: number;
  failedToolCalls: number;
  iterationLimitReached: boolean;
  /** the runaway guard stopped the turn's tool calls (the same call over and over, or too many calls) */
  runawayStopped?: boolean;
}

/** After a session was deleted, so a running turn of that chat can be cancelled and its caches dropped. */
export interface SessionDeletedEvent {
  chatId: string;
}

export type ConsolidationOutcome =
  /** the history is below the threshold */
  | 'below_threshold'
  /** another consolidation of this chat is running */
  | 'busy'
  /** no user-turn boundary leaves anything to summarise */
  | 'nothing_to_compress'
  | 'consolidated'
  /** the model failed, timed out or answered nothing, or the chat was deleted: nothing changed */
  | 'failed'
  /** skipped: the chat's last attempts failed and it is waiting a few turns before trying again */
  | 'backoff';

/** When a background consolidation attempt of a chat has finished (any outcome). */
export interface ConsolidationFinishedEvent {
  chatId: string;
  outcome: ConsolidationOutcome;
  /** keep_from_cursor of the appended summary (consolidated only) */
  keepFromCursor?: number;
}

/** Whenever the set of live MCP tools or the MCP catalog changes. */
export interface McpToolsChangedEvent {
  server: string;
  reason: 'connected' | 'disconnected' | 'list_changed' | 'error' | 'catalog';
}

/**
 * - `skipped`: the turn is not evidence (see `reason`)
 * - `recorded`: evidence written; no proposal (not recurring yet, a pending/applied proposal has the fingerprint, or
 *   one is being generated)
 * - `proposed`: evidence written and a pending proposal created
 * - `discarded`: the evolver's answer was unusable (model error, invalid reply, impossible target)
 * - `failed`: an unexpected error (logged)
 */
export type EvaluationOutcome = 'skipped' | 'recorded' | 'proposed' | 'discarded' | 'failed';

/** At the end of every skill-evolution evaluation of a completed turn. */
export interface EvaluationFinishedEvent {
  chatId: string;
  turnId: string;
  outcome: EvaluationOutcome;
  /** skipped/recorded/discarded: why */
  reason?: string;
  fingerprint?: string;
  evidenceId?: string;
  proposalId?: string;
}

/**
 * Once the server listens (HTTP and WebSocket): background work that must not delay the first health answer starts
 * here (the session index sync, warming the first-turn code paths). Not emitted by test modules that never listen.
 */
export type ServerListeningEvent = Record<string, never>;

/** The map: event name → payload. */
export interface AppEvents {
  [TURN_COMPLETED_EVENT]: TurnCompletedEvent;
  [SESSION_DELETED_EVENT]: SessionDeletedEvent;
  [CONSOLIDATION_FINISHED_EVENT]: ConsolidationFinishedEvent;
  /** after every Dream attempt (recorded or not) */
  [DREAM_FINISHED_EVENT]: DreamTriggerResponse;
  [MCP_TOOLS_CHANGED_EVENT]: McpToolsChangedEvent;
  [SKILL_EVOLUTION_EVALUATED_EVENT]: EvaluationFinishedEvent;
  /** after every model call was written to the usage ledger (refused calls included) */
  [MODEL_CALL_RECORDED_EVENT]: UsageRecord;
  [SERVER_LISTENING_EVENT]: ServerListeningEvent;
  [AGENT_RUNAWAY_EVENT]: AgentRunawayEvent;
  [AUTOMATION_RUN_ENDED_EVENT]: AutomationRunEndedEvent;
}

export type AppEventName = keyof AppEvents;
