/**
 * Automations (openspec automations): a prompt the agent runs on a schedule — a cron expression in a time zone, a fixed
 * interval, or once at a date — as a turn of its own chat, with the tools, approvals, budget and run time its owner
 * chose. Runs never overlap; after downtime a missed run runs once or is skipped, never several times.
 */
import type { LlmSelection } from './llm-provider';

export type AutomationSchedule =
  /** a five- or six-field cron expression evaluated in an IANA time zone (e.g. `Europe/Berlin`) */
  | { kind: 'cron'; expression: string; timezone: string }
  /** every N seconds from the last due time (at least 60) */
  | { kind: 'interval'; every_seconds: number }
  /** once, at an ISO 8601 date-time with an offset */
  | { kind: 'once'; at: string };

export type AutomationScheduleKind = AutomationSchedule['kind'];

/** `wait`: a call that needs approval waits for the owner up to the approval timeout; `deny`: it is denied at once. */
export type AutomationApprovals = 'wait' | 'deny';
/** `single`: one chat for every run of the automation; `per_run`: a new chat per run. */
export type AutomationChatMode = 'single' | 'per_run';
/** After downtime: a missed due time runs once at start (`run_once`) or is skipped (`skip`). */
export type AutomationMissedPolicy = 'run_once' | 'skip';

/** The most a run may spend (either or both; each > 0). Checked before each model call of the run. */
export interface AutomationBudget {
  tokens?: number;
  usd?: number;
}

export interface AutomationDelivery {
  /** a channel conversation that gets the run's answer (when channels are configured) */
  channel?: { kind: 'telegram'; chat_id: string };
}

export type AutomationRunOutcome =
  | 'running'
  | 'ok'
  | 'error'
  | 'skipped'
  | 'budget_exceeded'
  | 'timeout'
  | 'runaway_stopped'
  | 'cancelled';
export const AUTOMATION_RUN_OUTCOMES: readonly AutomationRunOutcome[] = [
  'running',
  'ok',
  'error',
  'skipped',
  'budget_exceeded',
  'timeout',
  'runaway_stopped',
  'cancelled',
];

/** `schedule`: a due time; `manual`: run now; `missed`: a due time that passed while the server was down. */
export type AutomationRunTrigger = 'schedule' | 'manual' | 'missed';

export interface AutomationRun {
  id: string;
  automation_id: string;
  /** ISO 8601 with offset */
  started_at: string;
  ended_at: string | null;
  outcome: AutomationRunOutcome;
  /** clear English when the run did not end `ok` (null otherwise) */
  error: string | null;
  /** the summed cost of the run's model calls from the usage ledger (null: unknown, e.g. no price) */
  cost_usd: number | null;
  tokens: number | null;
  chat_id: string | null;
  trigger: AutomationRunTrigger;
}

/** What the owner edits (POST body; PUT replaces all of it). */
export interface AutomationInput {
  name: string;
  prompt: string;
  schedule: AutomationSchedule;
  enabled: boolean;
  /** null: the default model */
  llm: LlmSelection | null;
  /** null: every tool the agent may use; else only these (built-in tool names) */
  tools: string[] | null;
  /** null: every MCP server; else only these servers' tools */
  mcp_servers: string[] | null;
  /** null: every Skill; else only these Skills may be loaded */
  skills: string[] | null;
  approvals: AutomationApprovals;
  budget: AutomationBudget | null;
  /** default 600 */
  max_run_seconds: number;
  chat_mode: AutomationChatMode;
  missed: AutomationMissedPolicy;
  delivery: AutomationDelivery | null;
}

/** Who created the automation: the owner (REST) or the agent (`schedule_task`, approved by the owner). */
export type AutomationSource = 'owner' | 'agent';

export interface Automation extends AutomationInput {
  id: string;
  /** additive */
  source: AutomationSource;
  created_at: string;
  updated_at: string;
  /** the next due time (null: disabled, or a `once` that has run) */
  next_run_at: string | null;
  last_run: AutomationRun | null;
  running: boolean;
}

export interface AutomationsResponse {
  automations: Automation[];
}

export interface AutomationRunResponse {
  run: AutomationRun;
}

export interface AutomationRunsPage {
  runs: AutomationRun[];
  /** pass as `before` for the next (older) page; null: no more */
  next_before: string | null;
}

export interface SchedulePreviewRequest {
  schedule: AutomationSchedule;
}

export interface SchedulePreviewResponse {
  /** human-readable, e.g. "At 08:00 AM, Monday through Friday (Europe/Berlin)" */
  description: string;
  /** the next (up to) five due times, ISO 8601 with offset */
  next: string[];
}

/** WS, to every connection: a run started or ended. */
export interface AutomationRunEvent {
  event: 'automation_run';
  /** the same as `event` (both name the frame) */
  type: 'automation_run';
  run: AutomationRun;
  automation_name: string;
}

/** What the owner's approval card of `schedule_task` shows: the automation the agent proposes. */
export interface ProposedAutomation {
  name: string;
  prompt: string;
  schedule: AutomationSchedule;
  /** human-readable, as the preview says it */
  schedule_description: string;
  /** the next (up to) five due times */
  next: string[];
  tools: string[] | null;
  mcp_servers: string[] | null;
  skills: string[] | null;
}

/** Defaults and bounds of the editable fields. */
export const AUTOMATION_DEFAULT_MAX_RUN_SECONDS = 600;
export const AUTOMATION_MAX_RUN_SECONDS = 86_400;
export const AUTOMATION_MIN_INTERVAL_SECONDS = 60;
export const AUTOMATION_MAX_NAME_CHARS = 100;
export const AUTOMATION_MAX_PROMPT_CHARS = 20_000;
