/**
 * The chat feature's state, as types only: the ChatStore holds one ChatState in a signal, and the pure transitions
 * (session-reducers.ts, history-merge.ts, server-events.ts) turn one state into the next. Components and helpers
 * import these types from here, so no module that the transitions use has to import the transitions back.
 */
import type {
  ApprovalDecision,
  ChannelMessageSource,
  ApprovalResolver,
  AttachmentReceipt,
  BrowserActionDetail,
  ExecCommandSpan,
  LoadedSkillReceipt,
  McpConnectorReceipt,
  Money,
  PublicTurnError,
  SessionSummary,
  SkillReceipt,
  StandingRuleScope,
  TokenUsage,
  ToolRisk,
  UntrustedSource,
  ProposedAutomation,
  WarningEvent,
} from '@cashcode/contracts';

import type { ElicitationCardState, ToolProgressState } from './tool-live-state';

export interface ApprovalResolution {
  decision: ApprovalDecision;
  by: ApprovalResolver;
}

export interface ApprovalState {
  callId: string;
  tool: string;
  risk: ToolRisk;
  /** the call's argument JSON exactly as the model sent it, shown untruncated */
  arguments: string;
  /** exec: the command line exactly as the shell gets it (null: not said, read it from `arguments`) */
  command: string | null;
  /** exec: each separate command of the line (offsets into `command`); null when the server did not split it */
  commands: ExecCommandSpan[] | null;
  /** exec: why the server could not split the line into commands */
  unanalysed: string | null;
  /** exec: the working directory the call asks for (null: the workspace) */
  cwd: string | null;
  /** ISO 8601: when the server denies the request by timeout */
  expiresAt: string;
  /** what "Always allow" would store; null when the server offers no standing rule */
  alwaysScope: StandingRuleScope | null;
  /** exec: whether the command runs in the sandbox (null: not said, ask the sandbox status) */
  sandboxed: boolean | null;
  server: string | null;
  destructive: boolean;
  /** risk `memory_write`: the untrusted content in the model's context, each named (absent: none said) */
  untrustedSources?: UntrustedSource[];
  /** risk `memory_write` of save_memory: the text that would be added to MEMORY.md */
  memoryEntry?: string;
  /** risk `browser_action`: the browser action, the element and the page (well-formed requests only) */
  browser?: BrowserActionDetail;
  /** the call is a sub-agent's: the parent's delegate call and the task it gave */
  subagent?: { callId: string; task: string };
  /** risk `schedule_task`: the automation the agent proposes (well-formed only) */
  proposedAutomation?: ProposedAutomation;
  /** the decision this client sent and the server has not settled yet */
  sent: ApprovalDecision | null;
  /** set by `approval_resolved` (or locally when the turn ended first) */
  resolution: ApprovalResolution | null;
}

/** `awaiting`: the call waits for the user's approval; `denied`: it was refused (by the user, a policy or the timer). */
export type ToolStatus = 'awaiting' | 'running' | 'ok' | 'error' | 'interrupted' | 'denied';

export interface ToolBlockState {
  callId: string;
  streamId: number;
  name: string;
  /** redacted, truncated JSON text from the server ('' when the server sent none) */
  arguments: string;
  status: ToolStatus;
  durationMs: number | null;
  result: string | null;
  /** the call needed the user's approval (open or settled) */
  approval?: ApprovalState;
  /** the server's last progress report while the call runs */
  progress?: ToolProgressState;
  /** an MCP server asked the user for input during the call */
  elicitation?: ElicitationCardState;
  /** a `delegate` call: its sub-agent's live progress (subagent-events.ts) */
  subagent?: SubagentState;
}

/** One tool call of a sub-agent, as its nested card lists it. */
export interface SubagentStepState {
  callId: string;
  name: string;
  arguments: string;
  status: 'running' | 'ok' | 'error';
  result: string | null;
  durationMs: number | null;
}

/** A sub-agent of a `delegate` call while it runs (and once it ended, until the history replaces the turn). */
export interface SubagentState {
  task: string;
  tools: string[];
  maxIterations: number;
  status: 'running' | 'ok' | 'failed' | 'cancelled';
  /** failed: the server's code and detail */
  code: string | null;
  detail: string | null;
  steps: SubagentStepState[];
  /** the child's answer text so far */
  text: string;
  durationMs: number | null;
}

export interface ChatMessage {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  streaming: boolean;
  tools: ToolBlockState[];
  /** the turn was stopped by the user (done.cancelled) */
  cancelled: boolean;
  /** assistant rows: the model stopped at its output limit (done.truncated); Continue carries on */
  truncated?: boolean;
  /** assistant rows: the model's reasoning (`reasoning` events, or the row's `reasoning`), shown collapsed */
  reasoning?: string;
  mentionedSkills?: SkillReceipt[];
  selectedMcpConnectors?: McpConnectorReceipt[];
  /** user rows of loaded history: Skills loaded for that turn (shown as small chips, never as assistant bubbles) */
  loadedSkills?: LoadedSkillReceipt[];
  /** user rows: the turn of this message failed (shown inline under it, with Retry); kept in history by the server */
  error?: PublicTurnError;
  /** user rows (live only): selections the turn ran without (`warning` events), shown as warning chips */
  warnings?: TurnWarning[];
  /** the history cursor of the persisted record (from the projection or `done`): the target of Edit */
  cursor?: number;
  /** assistant rows: the turn's token usage, when the provider reported it */
  usage?: TokenUsage;
  /** assistant rows: the turn's cost from the price table (absent with a usage: the model has no price) */
  cost?: Money;
  /** assistant rows: how long the turn took */
  durationMs?: number;
  /** assistant rows: a stopped answer being continued (its `done` adds to the stats) */
  resumed?: boolean;
  /** user rows: the uploaded files the message referred to */
  attachments?: AttachmentReceipt[];
  /** user rows of loaded history: the message arrived through a channel from this sender (absent: the owner's console) */
  source?: ChannelMessageSource;
}

/** A selected Skill or MCP connector the turn ran without. */
export type TurnWarning = Omit<WarningEvent, 'event' | 'chat_id'>;

export type HistoryStatus = 'idle' | 'loading' | 'loaded' | 'failed';

export interface ChatThread {
  chatId: string;
  messages: ChatMessage[];
  history: HistoryStatus;
  historyError: string | null;
  generating: boolean;
  /** inline error banner for this chat (turn or validation error) */
  error: string | null;
  /** a turn may have progressed while we were disconnected: reload history when it ends */
  resync: boolean;
  /**
   * id of the user message of a running turn rebuilt from `turn_replay`: that message and everything after it are the
   * live turn, kept after the persisted history (which does not hold the turn yet) until the turn ends
   */
  replayedTurn?: number;
}

export interface ChatState {
  sessions: SessionSummary[];
  activeChatId: string | null;
  threads: Record<string, ChatThread>;
  /** errors that belong to no chat (bad envelope, invalid attach) */
  banner: string | null;
  /** a new_chat frame is in flight: the next `attached` opens that chat */
  pendingNewChat: boolean;
  nextMessageId: number;
}
