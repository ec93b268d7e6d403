/**
 * What an approval says, and to whom (openspec approvals "Requirement: The owner sees exactly what runs"):
 * - the `approval_request` for the owner's screen carries the call's exact bytes — never redacted, never cut — and for
 *   exec the line, its working directory and each separate command it runs;
 * - the audit entry's preview and the model's denial text leave the owner's screen, so they are redacted and short.
 */
import type { ApprovalDecision, ApprovalRequestEvent, ApprovalResolver } from '@cashcode/contracts';
import { argumentPreview } from '../agent/argument-preview';
import type { ApprovalVerdict } from '../agent/tool-gate';
import { parseToolArguments } from '../agent/tool-registry';
import { localIsoWithOffset } from '../common/local-iso-time';
import { redactSecrets } from '../common/redact';
import { alwaysScope, execCwd, type Evaluated } from './call-evaluation';
import { commandSegments } from './command-analysis';

/** characters of the command or arguments in an audit entry and in the model's denial text */
export const AUDIT_PREVIEW_MAX_CHARS = 500;

/** Approval times: local ISO 8601 with milliseconds and offset. */
export function approvalTime(ms: number): string {
  return localIsoWithOffset(new Date(ms), { millis: true });
}

function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** What the model gets for an `ask` call of a headless turn (openspec openai-compat). */
export function headlessDenial(tool: string): string {
  return (
    `The tool \`${tool}\` needs approval; headless clients (the OpenAI-compatible API) cannot approve, so the call ` +
    'did not run. To use it from this client, allow the tool in Tools & approvals.'
  );
}

/** The request the owner answers: the call's exact bytes, and for exec each command of the line. */
export function approvalRequest(evaluated: Evaluated, expiresAt: number, sandboxed: boolean): ApprovalRequestEvent {
  const { call } = evaluated;
  const event: ApprovalRequestEvent = {
    event: 'approval_request',
    chat_id: call.chatId,
    call_id: call.callId,
    tool: evaluated.name,
    risk: evaluated.risk,
    // the exact bytes, on the owner's own screen: a redactor or a cut could hide what runs; logs, the audit and the
    // model's texts stay redacted
    arguments: call.rawArguments,
    expires_at: approvalTime(expiresAt),
  };
  const scope = alwaysScope(evaluated);
  if (scope !== undefined) event.always_scope = scope;
  if (evaluated.command !== undefined) {
    event.sandboxed = sandboxed;
    event.command = evaluated.command;
    const segments = commandSegments(evaluated.command);
    if (segments.ok) event.commands = segments.commands;
    else event.unanalysed = segments.reason;
    const cwd = execCwd(call.rawArguments);
    if (cwd !== undefined) event.cwd = cwd;
  }
  if (call.subagent) event.subagent = { ...call.subagent };
  if (call.tool.mcp) {
    event.server = call.tool.mcp.server;
    event.destructive = call.tool.mcp.destructive;
  }
  if (call.tool.approvalDetails) {
    const parsed = parseToolArguments(call.rawArguments);
    const details = parsed.ok ? call.tool.approvalDetails(parsed.args) : null;
    if (details) Object.assign(event, details);
  }
  if (evaluated.untrustedSources !== undefined) {
    event.untrusted_sources = evaluated.untrustedSources.map((source) => ({ ...source }));
    const parsed = parseToolArguments(call.rawArguments);
    const content = parsed.ok ? parsed.args['content'] : undefined;
    if (typeof content === 'string') event.memory_entry = content.trim();
  }
  if (evaluated.browser !== undefined) event.browser = { ...evaluated.browser };
  return event;
}

/** Redacted command (exec) or argument preview (others), for the audit log. */
export function auditPreview(evaluated: Evaluated): string {
  if (evaluated.command !== undefined) {
    const cwd = execCwd(evaluated.call.rawArguments);
    const shown = cwd === undefined ? evaluated.command : `(cwd ${cwd}) ${evaluated.command}`;
    return truncate(redactSecrets(shown), AUDIT_PREVIEW_MAX_CHARS);
  }
  return argumentPreview(evaluated.call.rawArguments);
}

/** What the loop does with a decided call; a denial tells the model what happened, redacted. */
export function approvalVerdict(
  evaluated: Evaluated,
  decision: ApprovalDecision,
  by: ApprovalResolver,
  timeoutSec: number,
): ApprovalVerdict {
  if (decision !== 'deny') return { run: true };
  const what =
    evaluated.command !== undefined
      ? `\`${truncate(redactSecrets(evaluated.command), AUDIT_PREVIEW_MAX_CHARS)}\``
      : `the tool \`${evaluated.name}\``;
  let model: string;
  switch (by) {
    case 'policy':
      model = `Policy denies the tool \`${evaluated.name}\`; the call did not run. Do not try to get the same effect another way.`;
      break;
    case 'timeout':
      model = `No one answered the approval request for running ${what} within ${timeoutSec} s, so it was denied and did not run.`;
      break;
    case 'cancel':
      model = `The approval request for running ${what} was cancelled; it did not run.`;
      break;
    case 'user':
      model = `The user denied running ${what}. It did not run. Do not try to get the same effect another way unless the user asks.`;
      break;
  }
  return { run: false, model };
}
