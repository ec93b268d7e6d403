/**
 * history.jsonl records (openspec memory): parsing one line, building the records of a turn (openspec memory) and
 * turning records back into model messages (openspec memory). Pure functions, no I/O.
 */
import { isRecord, UNTRUSTED_SOURCE_KINDS, type AttachmentReceipt, type Money, type TokenUsage, type UntrustedSource } from '@cashcode/contracts';
import { withAttachmentsReference } from '../common/attachment-reference';
import { attachmentSources, uniqueSources } from '../common/untrusted-sources';
import type {
  ChatMessage,
  FinalAnswer,
  HistoryRecord,
  HistoryRole,
  ToolCallRecord,
  TurnErrorMarker,
  UserTurnInput,
} from './memory.types';

/**
 * Prefix of the synthetic assistant message that carries a consolidation summary (openspec memory, English wording).
 */
export const SUMMARY_MESSAGE_PREFIX = '[History summary] ';

const ROLES: ReadonlySet<string> = new Set<HistoryRole>(['user', 'assistant', 'tool_calls', 'tool', 'summary']);

/** A record before the store assigns its cursor and timestamp. */
export type PendingRecord = Omit<HistoryRecord, 'cursor' | 'timestamp'>;

/** `content` coerced to a string the way the original server's `str()` would for the usual cases. */
function coerceContent(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Keeps only well-formed tool calls; `arguments` given as an object is re-encoded as a JSON string. */
export function normalizeToolCalls(value: unknown): ToolCallRecord[] {
  if (!Array.isArray(value)) return [];
  const calls: ToolCallRecord[] = [];
  for (const entry of value) {
    if (!isRecord(entry)) continue;
    const fn = entry['function'];
    if (!isRecord(fn) || typeof fn['name'] !== 'string' || fn['name'] === '') continue;
    const id = typeof entry['id'] === 'string' ? entry['id'] : '';
    const rawArguments = fn['arguments'];
    const args =
      typeof rawArguments === 'string'
        ? rawArguments
        : rawArguments === undefined || rawArguments === null
          ? '{}'
          : JSON.stringify(rawArguments);
    calls.push({ id, type: 'function', function: { name: fn['name'], arguments: args } });
  }
  return calls;
}

/**
 * Parses one line of history.jsonl. Accepts compact and Python-style (`", "` / `": "`) JSON. Returns null for a
 * blank or malformed line: not a JSON object, no integer `cursor`, or an unknown `role`. Unknown extra fields are
 * kept; selection receipts are kept as stored (they are re-sanitised whenever they are shown, openspec sessions).
 */
export function parseHistoryLine(line: string): HistoryRecord | null {
  const text = line.trim();
  if (text === '' || text[0] !== '{') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const cursor = value['cursor'];
  const role = value['role'];
  if (typeof cursor !== 'number' || !Number.isSafeInteger(cursor)) return null;
  if (typeof role !== 'string' || !ROLES.has(role)) return null;
  const record: HistoryRecord = {
    ...value,
    cursor,
    timestamp: typeof value['timestamp'] === 'string' ? value['timestamp'] : '',
    role: role as HistoryRole,
    content: coerceContent(value['content']),
  };
  if ('tool_calls' in value) record.tool_calls = normalizeToolCalls(value['tool_calls']);
  if ('tool_call_id' in value) {
    if (typeof value['tool_call_id'] === 'string') record.tool_call_id = value['tool_call_id'];
    else delete record.tool_call_id;
  }
  if ('name' in value) {
    if (typeof value['name'] === 'string') record.name = value['name'];
    else delete record.name;
  }
  if ('keep_from_cursor' in value) {
    const keep = value['keep_from_cursor'];
    if (typeof keep === 'number' && Number.isSafeInteger(keep)) record.keep_from_cursor = keep;
    else delete record.keep_from_cursor;
  }
  if ('cancelled' in value) {
    if (value['cancelled'] === true) record.cancelled = true;
    else delete record.cancelled;
  }
  if ('truncated' in value) {
    if (value['truncated'] === true) record.truncated = true;
    else delete record.truncated;
  }
  if ('reasoning' in value) {
    if (typeof value['reasoning'] === 'string' && value['reasoning'] !== '') record.reasoning = value['reasoning'];
    else delete record.reasoning;
  }
  if ('error' in value) {
    const marker = value['error'];
    if (isRecord(marker) && typeof marker['kind'] === 'string' && typeof marker['message'] === 'string') {
      record.error = { kind: marker['kind'], message: marker['message'] };
    } else delete record.error;
  }
  if ('duration_ms' in value) {
    const duration = value['duration_ms'];
    if (typeof duration === 'number' && Number.isFinite(duration) && duration >= 0) record.duration_ms = duration;
    else delete record.duration_ms;
  }
  if ('supersedes' in value) {
    const from = value['supersedes'];
    if (typeof from === 'number' && Number.isSafeInteger(from) && from >= 0 && from < cursor) record.supersedes = from;
    else delete record.supersedes;
  }
  if ('usage' in value) {
    const usage = parseUsage(value['usage']);
    if (usage) record.usage = usage;
    else delete record.usage;
  }
  if ('cost' in value) {
    const cost = parseMoney(value['cost']);
    if (cost) record.cost = cost;
    else delete record.cost;
  }
  if ('ok' in value) {
    if (typeof value['ok'] === 'boolean') record.ok = value['ok'];
    else delete record.ok;
  }
  if ('attachments' in value) {
    const attachments = normalizeAttachments(value['attachments']);
    if (attachments.length > 0) record.attachments = attachments;
    else delete record.attachments;
  }
  if ('untrusted_sources' in value) {
    const sources = normalizeSources(value['untrusted_sources']);
    if (sources.length > 0) record.untrusted_sources = sources;
    else delete record.untrusted_sources;
  }
  return record;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** A stored token usage: three non-negative integers (and `cached_tokens` when one was stored), else null. */
export function parseUsage(value: unknown): TokenUsage | null {
  if (!isRecord(value)) return null;
  const fields = ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const;
  for (const field of fields) {
    if (!isCount(value[field])) return null;
  }
  const usage: TokenUsage = {
    prompt_tokens: value['prompt_tokens'] as number,
    completion_tokens: value['completion_tokens'] as number,
    total_tokens: value['total_tokens'] as number,
  };
  if (isCount(value['cached_tokens'])) usage.cached_tokens = value['cached_tokens'];
  return usage;
}

/** A stored cost: a finite amount >= 0 and a three-letter currency, else null. */
export function parseMoney(value: unknown): Money | null {
  if (!isRecord(value)) return null;
  const { amount, currency } = value;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return null;
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return null;
  return { amount, currency };
}

/** Keeps only well-formed untrusted sources (a known kind and a name). */
function normalizeSources(value: unknown): UntrustedSource[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (item): item is UntrustedSource =>
      isRecord(item) && typeof item['name'] === 'string' && (UNTRUSTED_SOURCE_KINDS as readonly unknown[]).includes(item['kind']),
  );
}

/** Keeps only well-formed attachment receipts (name, path and mime strings, a size in bytes). */
export function normalizeAttachments(value: unknown): AttachmentReceipt[] {
  if (!Array.isArray(value)) return [];
  const out: AttachmentReceipt[] = [];
  for (const entry of value) {
    if (!isRecord(entry)) continue;
    const { name, path, size, mime } = entry;
    if (typeof name !== 'string' || typeof path !== 'string' || typeof mime !== 'string') continue;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) continue;
    out.push({ name, path, size, mime });
  }
  return out;
}

/** One history line (compact JSON, no trailing newline). JSON.stringify escapes lone surrogates, so it is valid UTF-8. */
export function serializeHistoryRecord(record: HistoryRecord): string {
  return JSON.stringify(record);
}

/**
 * A history record → a model message (openspec memory "Requirement: Smart load from the end of the file"). Returns null
 * for records that are not sent to the model.
 */
export function recordToMessage(record: HistoryRecord): ChatMessage | null {
  switch (record.role) {
    case 'user':
      // the user message of a failed turn is kept for the user, not for the model (a retry is a new user record)
      if (record.error) return null;
      return record.content !== '' ? userMessage(record) : null;
    case 'assistant':
      return record.content !== '' ? { role: 'assistant', content: record.content } : null;
    case 'tool_calls':
      return record.tool_calls && record.tool_calls.length > 0
        ? { role: 'assistant', content: record.content, tool_calls: record.tool_calls }
        : null;
    case 'tool':
      // The original server also required non-empty content; an empty tool result is kept so that the preceding
      // tool_calls message always has its answer (providers reject an unanswered tool call).
      return record.tool_call_id
        ? { role: 'tool', tool_call_id: record.tool_call_id, name: record.name ?? '', content: record.content }
        : null;
    case 'summary':
      return null;
  }
}

/** The synthetic first message of a consolidated chat (openspec memory); null for an empty summary. */
export function summaryToMessage(summary: HistoryRecord): ChatMessage | null {
  if (summary.content === '') return null;
  const message: ChatMessage = { role: 'assistant', content: `${SUMMARY_MESSAGE_PREFIX}${summary.content}` };
  // a summary of untrusted content stays untrusted (agent/untrusted-context.ts reads the mark)
  if (summary.untrusted_sources && summary.untrusted_sources.length > 0) message.untrusted_sources = [...summary.untrusted_sources];
  return message;
}

/** A user record as the model's message; the untrusted content it brings (attachments, a channel sender) is marked. */
function userMessage(record: HistoryRecord): ChatMessage {
  const message: ChatMessage = { role: 'user', content: withAttachmentsReference(record.content, record.attachments) };
  const sources = uniqueSources([...attachmentSources(record.attachments), ...(record.untrusted_sources ?? [])]);
  if (sources.length > 0) message.untrusted_sources = sources;
  return message;
}

/** Whether `text` is the placeholder content `toolCallsContent` gives a tool-call record. */
export function isToolCallsContent(text: string): boolean {
  return text.startsWith('[TOOL_CALLS') && /^\[TOOL_CALLS(?:: [^\]\n]*)?\]$/.test(text);
}

/** `[TOOL_CALLS: a, b]` (or `[TOOL_CALLS]` without names). */
export function toolCallsContent(calls: readonly ToolCallRecord[]): string {
  const names = calls.map((call) => call.function.name).filter((name) => name !== '');
  return names.length > 0 ? `[TOOL_CALLS: ${names.join(', ')}]` : '[TOOL_CALLS]';
}

/** The user record of a failed turn (openspec sessions): its receipts and the error marker, nothing else. */
export function failedTurnRecord(user: UserTurnInput, error: TurnErrorMarker): PendingRecord {
  const record = userRecord(user);
  record.error = { kind: error.kind, message: error.message };
  return record;
}

function userRecord(user: UserTurnInput): PendingRecord {
  const record: PendingRecord = { role: 'user', content: user.content };
  if (user.attachments && user.attachments.length > 0) record.attachments = user.attachments;
  if (user.mentioned_skills && user.mentioned_skills.length > 0) record.mentioned_skills = user.mentioned_skills;
  if (user.selected_mcp_connectors && user.selected_mcp_connectors.length > 0) {
    record.selected_mcp_connectors = user.selected_mcp_connectors;
  }
  if (user.untrusted_sources && user.untrusted_sources.length > 0) record.untrusted_sources = user.untrusted_sources;
  if (user.source) record.source = { ...user.source };
  return record;
}

/**
 * The records of one turn in order (openspec memory): the user record with its selection receipts, each durable message
 * (assistant with tool calls → `tool_calls`; assistant text → `assistant`; tool → `tool`; anything else skipped),
 * then the final assistant answer (`cancelled: true` for the partial answer of a cancelled turn).
 */
export function turnRecords(user: UserTurnInput, durable: readonly ChatMessage[], final: FinalAnswer): PendingRecord[] {
  return [userRecord(user), ...answerRecords(durable, final)];
}

/** The records of a turn after its user record (a continuation has no user record of its own). */
export function answerRecords(durable: readonly ChatMessage[], final: FinalAnswer): PendingRecord[] {
  const records: PendingRecord[] = [];
  for (const message of durable) {
    if (message.role === 'assistant') {
      const calls = normalizeToolCalls(message.tool_calls);
      if (calls.length > 0) {
        records.push({ role: 'tool_calls', content: toolCallsContent(calls), tool_calls: calls });
      } else if (message.content) {
        records.push({ role: 'assistant', content: message.content });
      }
    } else if (message.role === 'tool') {
      const record: PendingRecord = {
        role: 'tool',
        content: message.content,
        tool_call_id: message.tool_call_id,
        name: message.name,
      };
      // additive: outcome and duration of the call (shown by a reopened chat, never sent to the model)
      if (typeof message.ok === 'boolean') record.ok = message.ok;
      if (typeof message.duration_ms === 'number') record.duration_ms = message.duration_ms;
      records.push(record);
    }
  }
  const finalRecord: PendingRecord = { role: 'assistant', content: final.content };
  if (final.cancelled) finalRecord.cancelled = true;
  if (final.truncated) finalRecord.truncated = true;
  // additive: shown collapsed with the answer, never sent to the model
  if (final.reasoning) finalRecord.reasoning = final.reasoning;
  // additive: shown on the answer after a reload, never sent to the model
  if (final.usage) finalRecord.usage = { ...final.usage };
  if (final.cost) finalRecord.cost = { ...final.cost };
  if (typeof final.duration_ms === 'number') finalRecord.duration_ms = final.duration_ms;
  records.push(finalRecord);
  return records;
}
