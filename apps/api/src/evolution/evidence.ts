/**
 * Evidence rules (openspec skill-evolution "Requirement: Evidence rules"; pure, no I/O): which completed turns count as
 * evidence of a reusable workflow, and the redacted, truncated record kept of one.
 */
import { randomBytes } from 'node:crypto';
import type { SkillEvolutionEvidence, SkillEvolutionToolCall } from '@cashcode/contracts';
import type { TurnCompletedEvent } from '../events/app-events';
import { redactSecrets } from '../common/redact';
import { chatIdHash, workflowFingerprint } from './fingerprint';

export const EVIDENCE_LIMITS = {
  user: 2000,
  assistant: 2500,
  toolReceipt: 500,
  toolArguments: 300,
  /** tool calls / receipts kept per record */
  toolCalls: 64,
} as const;

export interface EvidenceRules {
  enabled: boolean;
  minToolCalls: number;
}

/**
 * Why a turn is not evidence: evolution off, a failed tool call, the iteration limit (the original server's
 * `turn_not_persisted`: such a trace is not a success) or the runaway guard (a loop is no pattern to learn), or fewer tool calls than SKILL_EVOLUTION_MIN_TOOL_CALLS
 * (counted with repetition). Failed and cancelled turns never reach evolution (no turn-completed event).
 */
export type EvidenceSkipReason =
  | 'disabled'
  | 'failed_tool_call'
  | 'iteration_limit_reached'
  | 'runaway_stopped'
  | 'insufficient_tool_calls';

export function evidenceSkipReason(event: TurnCompletedEvent, rules: EvidenceRules): EvidenceSkipReason | null {
  if (!rules.enabled) return 'disabled';
  if (event.failedToolCalls > 0) return 'failed_tool_call';
  if (event.iterationLimitReached) return 'iteration_limit_reached';
  if (event.runawayStopped === true) return 'runaway_stopped';
  if (event.toolCalls < rules.minToolCalls) return 'insufficient_tool_calls';
  return null;
}

/** The original server's secret pattern (`token`, `password`, … followed by `:`/`=` and a value). */
const LABELLED_SECRET = /(api[_-]?key|token|password|secret)\s*[:=]\s*[^\s,;]+/gi;
/** The same labels as quoted JSON keys (`"token": "…"`, `"db_password": 123`), e.g. in tool-call arguments. */
const QUOTED_LABELLED_SECRET = /"([\w-]*(?:api[_-]?key|token|password|secret))"(\s*:\s*)(?:"(?:[^"\\]|\\.)*"|[^\s,}\]]+)/gi;
const SKILL_RECEIPT = /\[Skill loaded:[^\]\n]*\]/g;

/** Cuts to `max` code points, ending with `…` when something was cut. */
export function truncateText(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/**
 * Redacts secrets (registered secret values, bearer tokens, `sk-…` keys, `key: value` pairs naming a secret, and the
 * original server's `<label>=[REDACTED]` rule), replaces Skill receipts by `[Skill loaded receipt]`, then truncates.
 * Redaction runs before truncation so a cut can never leave half a secret behind.
 */
export function sanitiseEvidenceText(text: string, max: number): string {
  const redacted = redactSecrets(text)
    .replace(QUOTED_LABELLED_SECRET, (_match, label: string, separator: string) => `"${label}"${separator}"[REDACTED]"`)
    .replace(LABELLED_SECRET, (_match, label: string) => `${label}=[REDACTED]`)
    .replace(SKILL_RECEIPT, '[Skill loaded receipt]');
  return truncateText(redacted, max);
}

/** `<epoch ms>-<8 hex>` (sorts by creation time). */
export function newEvidenceId(now: Date): string {
  return `${now.getTime()}-${randomBytes(4).toString('hex')}`;
}

export const EVIDENCE_ID_PATTERN = /^\d{13}-[0-9a-f]{8}$/;

/** The tool calls of a turn in call order, from its persisted assistant tool-call messages. */
export function turnToolCalls(event: TurnCompletedEvent): Array<{ name: string; arguments: string }> {
  const calls: Array<{ name: string; arguments: string }> = [];
  for (const message of event.durable) {
    if (message.role !== 'assistant' || !message.tool_calls) continue;
    for (const call of message.tool_calls) calls.push({ name: call.function.name, arguments: call.function.arguments });
  }
  return calls;
}

/** The evidence record of a turn that passed evidenceSkipReason. */
export function buildEvidence(event: TurnCompletedEvent, now: Date): SkillEvolutionEvidence {
  const calls = turnToolCalls(event);
  const tools = calls.map((call) => call.name);
  const toolCalls: SkillEvolutionToolCall[] = calls.slice(0, EVIDENCE_LIMITS.toolCalls).map((call) => ({
    name: call.name,
    arguments: sanitiseEvidenceText(call.arguments, EVIDENCE_LIMITS.toolArguments),
  }));
  const receipts = event.durable
    .filter((message) => message.role === 'tool')
    .slice(0, EVIDENCE_LIMITS.toolCalls)
    .map((message) => sanitiseEvidenceText(message.content, EVIDENCE_LIMITS.toolReceipt));
  return {
    id: newEvidenceId(now),
    fingerprint: workflowFingerprint(event.userContent, tools),
    chat_id_hash: chatIdHash(event.chatId),
    user: sanitiseEvidenceText(event.userContent, EVIDENCE_LIMITS.user),
    assistant: sanitiseEvidenceText(event.answer, EVIDENCE_LIMITS.assistant),
    tools: tools.slice(0, EVIDENCE_LIMITS.toolCalls),
    tool_calls: toolCalls,
    tool_receipts: receipts,
    created_at: now.toISOString(),
  };
}

/** Narrows a parsed evidence file; null when it is not a well-formed record. */
export function parseEvidence(value: unknown): SkillEvolutionEvidence | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const strings = (list: unknown): list is string[] => Array.isArray(list) && list.every((x) => typeof x === 'string');
  if (
    typeof v['id'] !== 'string' ||
    !EVIDENCE_ID_PATTERN.test(v['id']) ||
    typeof v['fingerprint'] !== 'string' ||
    typeof v['chat_id_hash'] !== 'string' ||
    typeof v['user'] !== 'string' ||
    typeof v['assistant'] !== 'string' ||
    !strings(v['tools']) ||
    !strings(v['tool_receipts']) ||
    typeof v['created_at'] !== 'string'
  ) {
    return null;
  }
  const rawCalls = Array.isArray(v['tool_calls']) ? (v['tool_calls'] as unknown[]) : [];
  const toolCalls = rawCalls.flatMap((call): SkillEvolutionToolCall[] => {
    if (typeof call !== 'object' || call === null) return [];
    const c = call as Record<string, unknown>;
    return typeof c['name'] === 'string' && typeof c['arguments'] === 'string'
      ? [{ name: c['name'], arguments: c['arguments'] }]
      : [];
  });
  return {
    id: v['id'],
    fingerprint: v['fingerprint'],
    chat_id_hash: v['chat_id_hash'],
    user: v['user'],
    assistant: v['assistant'],
    tools: v['tools'],
    tool_calls: toolCalls,
    tool_receipts: v['tool_receipts'],
    created_at: v['created_at'],
  };
}
