/**
 * Approvals in the chat state: a tool call whose policy is `ask` waits for the user. The server announces it with
 * `approval_request` and settles it with `approval_resolved`; both are keyed by `call_id`, like the tool blocks, so
 * the approval lives on the tool block of its call. Pure functions, applied by the server-event handlers (tool-events.ts); the state's types are in chat-types.ts.
 */
import type {
  ApprovalDecision,
  ApprovalRequestEvent,
  ApprovalResolvedEvent,
  BrowserActionDetail,
  ExecCommandSpan,
  ProposedAutomation,
  StandingRuleScope,
} from '@cashcode/contracts';
import { execArgvLabel, isRecord, TOOL_RISKS } from '@cashcode/contracts';

import type { ApprovalResolution, ApprovalState, ChatMessage, ChatThread, ToolBlockState } from './chat-types';

export type { ApprovalResolution, ApprovalState } from './chat-types';

export type ApprovalOutcome =
  | 'allowedOnce'
  | 'allowedAlways'
  | 'deniedByUser'
  | 'allowedByPolicy'
  | 'deniedByPolicy'
  | 'expired'
  | 'cancelled';

/** How a settled approval reads on its card. */
export function approvalOutcome(resolution: ApprovalResolution): ApprovalOutcome {
  switch (resolution.by) {
    case 'timeout':
      return 'expired';
    case 'cancel':
      return 'cancelled';
    case 'policy':
      return resolution.decision === 'deny' ? 'deniedByPolicy' : 'allowedByPolicy';
    case 'user':
    default:
      if (resolution.decision === 'allow_once') return 'allowedOnce';
      if (resolution.decision === 'allow_always') return 'allowedAlways';
      return 'deniedByUser';
  }
}

export function isPending(approval: ApprovalState | undefined): approval is ApprovalState {
  return approval !== undefined && approval.resolution === null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function isScope(value: unknown): value is StandingRuleScope {
  if (typeof value !== 'object' || value === null) return false;
  const scope = value as Record<string, unknown>;
  switch (scope['kind']) {
    case 'exec_program':
      return typeof scope['program'] === 'string' && scope['program'] !== '';
    case 'exec_command': {
      const argv = scope['argv'];
      return Array.isArray(argv) && argv.length > 0 && argv.every((word) => typeof word === 'string');
    }
    case 'tool':
      return typeof scope['tool'] === 'string' && scope['tool'] !== '';
    case 'mcp_tool':
      return typeof scope['server'] === 'string' && typeof scope['tool'] === 'string';
    default:
      return false;
  }
}

/** The command spans of an event when every one lies inside the command, in order and apart; else null. */
function commandSpans(value: unknown, command: string | null): ExecCommandSpan[] | null {
  if (command === null || !Array.isArray(value)) return null;
  const spans: ExecCommandSpan[] = [];
  let last = 0;
  for (const item of value) {
    if (!isRecord(item)) return null;
    const { program, start, end } = item;
    if (typeof program !== 'string' || !Number.isInteger(start) || !Number.isInteger(end)) return null;
    if ((start as number) < last || (end as number) <= (start as number) || (end as number) > command.length) return null;
    spans.push({ program, start: start as number, end: end as number });
    last = end as number;
  }
  return spans;
}

/** The named untrusted sources and the memory entry of a `memory_write` request (well-formed ones only). */
function untrustedFields(event: ApprovalRequestEvent): Pick<ApprovalState, 'untrustedSources' | 'memoryEntry'> {
  const out: Pick<ApprovalState, 'untrustedSources' | 'memoryEntry'> = {};
  if (Array.isArray(event.untrusted_sources)) {
    out.untrustedSources = event.untrusted_sources.filter(
      (source) => isRecord(source) && typeof source.kind === 'string' && typeof source.name === 'string',
    );
  }
  const entry = text(event.memory_entry);
  if (entry !== null) out.memoryEntry = entry;
  return out;
}

/** The action, element and page of a `browser_action` request (absent when malformed). */
function browserFields(event: ApprovalRequestEvent): Pick<ApprovalState, 'browser'> {
  const detail: unknown = event.browser;
  if (!isRecord(detail) || typeof detail['action'] !== 'string' || typeof detail['url'] !== 'string') return {};
  const reason = detail['reason'] === 'outside_allowed_domains' ? 'outside_allowed_domains' : 'form_submit';
  const browser: BrowserActionDetail = { action: detail['action'], url: detail['url'], reason };
  if (typeof detail['element'] === 'string') browser.element = detail['element'];
  if (typeof detail['text'] === 'string') browser.text = detail['text'];
  return { browser };
}

/** The sub-agent a request names (a well-formed `subagent` only). */
function subagentField(event: ApprovalRequestEvent): Pick<ApprovalState, 'subagent'> {
  const ref = event.subagent;
  if (!isRecord(ref) || typeof ref['call_id'] !== 'string' || typeof ref['task'] !== 'string') return {};
  return { subagent: { callId: ref['call_id'], task: ref['task'] } };
}

/** The automation a `schedule_task` request proposes, when it is well-formed. */
function proposedAutomation(event: ApprovalRequestEvent): Pick<ApprovalState, 'proposedAutomation'> {
  const value: unknown = event.automation;
  if (!isRecord(value) || typeof value['name'] !== 'string' || typeof value['prompt'] !== 'string') return {};
  const strings = (list: unknown): string[] | null =>
    Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : null;
  return {
    proposedAutomation: {
      name: value['name'],
      prompt: value['prompt'],
      schedule: value['schedule'] as ProposedAutomation['schedule'],
      schedule_description: typeof value['schedule_description'] === 'string' ? value['schedule_description'] : '',
      next: strings(value['next']) ?? [],
      tools: strings(value['tools']),
      mcp_servers: strings(value['mcp_servers']),
      skills: strings(value['skills']),
    },
  };
}

/** The card's state from an `approval_request` (defensive about fields other servers may leave out). */
export function approvalFromEvent(event: ApprovalRequestEvent): ApprovalState {
  const risk = TOOL_RISKS.includes(event.risk) ? event.risk : 'exec';
  return {
    callId: event.call_id,
    tool: text(event.tool) ?? '',
    risk,
    arguments: text(event.arguments) ?? '',
    command: text(event.command),
    commands: commandSpans(event.commands, text(event.command)),
    unanalysed: text(event.unanalysed),
    cwd: text(event.cwd),
    expiresAt: text(event.expires_at) ?? '',
    alwaysScope: isScope(event.always_scope) ? event.always_scope : null,
    sandboxed: typeof event.sandboxed === 'boolean' ? event.sandboxed : null,
    server: text(event.server),
    destructive: event.destructive === true,
    ...untrustedFields(event),
    ...browserFields(event),
    ...subagentField(event),
    ...proposedAutomation(event),
    sent: null,
    resolution: null,
  };
}

/** Where the block of `callId` is in the thread (newest message first), or null. */
export function findCall(thread: ChatThread, callId: string): { message: number; tool: number } | null {
  for (let m = thread.messages.length - 1; m >= 0; m--) {
    const index = thread.messages[m].tools.findIndex((tool) => tool.callId === callId);
    if (index >= 0) return { message: m, tool: index };
  }
  return null;
}

function updateCall(
  thread: ChatThread,
  at: { message: number; tool: number },
  update: (tool: ToolBlockState) => ToolBlockState,
): ChatThread {
  const messages = [...thread.messages];
  const message = messages[at.message];
  const tools = [...message.tools];
  tools[at.tool] = update(tools[at.tool]);
  messages[at.message] = { ...message, tools };
  return { ...thread, messages };
}

/**
 * An `approval_request` for a call the thread already shows. Deduplicated by `call_id`: the server re-sends pending
 * requests to every client that attaches, so a repeat refreshes the pending card (keeping a decision sent on this
 * connection) but never adds a second card or reopens a settled one.
 * Returns null when the thread has no block for the call (the caller adds one).
 */
export function requestOnKnownCall(thread: ChatThread, event: ApprovalRequestEvent): ChatThread | null {
  const at = findCall(thread, event.call_id);
  if (at === null) return null;
  const existing = thread.messages[at.message].tools[at.tool];
  if (existing.approval && existing.approval.resolution !== null) return thread;
  const fresh = approvalFromEvent(event);
  return updateCall(thread, at, (tool) => ({
    ...tool,
    status: 'awaiting',
    arguments: tool.arguments || fresh.arguments,
    approval: { ...fresh, sent: existing.approval?.sent ?? null },
  }));
}

/** A new tool block for a call first seen through its approval request. */
export function blockFromRequest(event: ApprovalRequestEvent, streamId: number): ToolBlockState {
  const approval = approvalFromEvent(event);
  return {
    callId: approval.callId,
    streamId,
    name: approval.tool,
    arguments: approval.arguments,
    status: 'awaiting',
    durationMs: null,
    result: null,
    approval,
  };
}

/** `approval_resolved`: the card shows the outcome; an allowed call runs now, a refused one never runs. */
export function resolveApproval(thread: ChatThread, event: ApprovalResolvedEvent): ChatThread {
  const at = findCall(thread, event.call_id);
  if (at === null) return thread;
  const tool = thread.messages[at.message].tools[at.tool];
  if (!tool.approval || tool.approval.resolution !== null) return thread;
  const resolution: ApprovalResolution = { decision: event.decision, by: event.by };
  const allowed = event.decision !== 'deny';
  return updateCall(thread, at, (current) => ({
    ...current,
    status: current.status === 'awaiting' ? (allowed ? 'running' : 'denied') : current.status,
    approval: { ...current.approval!, sent: null, resolution },
  }));
}

/** The user's decision was sent: the buttons wait for `approval_resolved`. */
export function approvalSent(thread: ChatThread, callId: string, decision: ApprovalDecision): ChatThread {
  const at = findCall(thread, callId);
  if (at === null) return thread;
  const tool = thread.messages[at.message].tools[at.tool];
  if (!isPending(tool.approval)) return thread;
  return updateCall(thread, at, (current) => ({ ...current, approval: { ...current.approval!, sent: decision } }));
}

/** The connection dropped: decisions sent on it may be lost, so the open cards can be answered again. */
export function forgetSentDecisions(thread: ChatThread): ChatThread {
  if (!thread.messages.some((message) => message.tools.some((tool) => tool.approval?.sent))) return thread;
  return {
    ...thread,
    messages: thread.messages.map((message) =>
      message.tools.some((tool) => tool.approval?.sent)
        ? {
            ...message,
            tools: message.tools.map((tool) =>
              tool.approval?.sent ? { ...tool, approval: { ...tool.approval, sent: null } } : tool,
            ),
          }
        : message,
    ),
  };
}

/** A block's approval when its turn ends first: a card still open can no longer be answered. */
export function cancelPendingApproval(tool: ToolBlockState): ToolBlockState {
  if (!isPending(tool.approval)) return tool;
  return {
    ...tool,
    status: tool.status === 'awaiting' ? 'interrupted' : tool.status,
    approval: { ...tool.approval, sent: null, resolution: { decision: 'deny', by: 'cancel' } },
  };
}

/** Tool blocks of the thread whose approval is still open. */
export function pendingApprovalBlocks(thread: ChatThread): ToolBlockState[] {
  const out: ToolBlockState[] = [];
  for (const message of thread.messages) for (const tool of message.tools) if (isPending(tool.approval)) out.push(tool);
  return out;
}

/**
 * History replaces the local copy of a thread; open approvals must survive that (the history request may answer
 * after the server re-sent them on attach), so they move to a streaming assistant message after the history.
 */
export function keepPendingApprovals(previous: ChatThread | undefined, mapped: ChatMessage[], id: number): ChatMessage[] {
  if (!previous) return mapped;
  const pending = pendingApprovalBlocks(previous);
  if (pending.length === 0) return mapped;
  return [...mapped, { id, role: 'assistant', content: '', streaming: true, tools: pending, cancelled: false }];
}

/** Whole seconds left until `expiresAt` (0 when past, null when the time is not readable). */
export function secondsLeft(expiresAt: string, now: number): number | null {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** 4:05 · 0:09 · 1:02:03 */
export function formatCountdown(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** The scope of a standing rule as a short label: `ls`, `git status`, `write_file`, `github/create_issue`. */
export function scopeLabel(scope: StandingRuleScope): string {
  switch (scope.kind) {
    case 'exec_program':
      return scope.program;
    case 'exec_command':
      return execArgvLabel(scope.argv);
    case 'tool':
      return scope.tool;
    case 'mcp_tool':
      return `${scope.server}/${scope.tool}`;
  }
}

/** The command of an exec call (its `command` argument), else the argument text pretty-printed. */
export function approvalArguments(
  approval: Pick<ApprovalState, 'risk' | 'arguments'> & { command?: string | null },
): { command: boolean; text: string } {
  if (typeof approval.command === 'string') return { command: true, text: approval.command };
  const raw = approval.arguments;
  try {
    const value: unknown = JSON.parse(raw);
    if (isRecord(value)) {
      const command = value['command'];
      const keys = Object.keys(value);
      if (approval.risk === 'exec' && typeof command === 'string' && keys.length === 1) return { command: true, text: command };
      return { command: false, text: JSON.stringify(value, null, 2) };
    }
  } catch {
    // not JSON: the server sent the command as text
  }
  return { command: approval.risk === 'exec', text: raw };
}
