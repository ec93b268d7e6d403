/**
 * Dream's input and output as plain functions (openspec memory): the batch of records given to the model and how each
 * is shown, the two phase prompts, how far each chat's cursor advances, the clean-up of the model's new MEMORY.md and
 * the loss guard. DreamService (dream.service.ts) runs them.
 */
import { untrustedSourceOf } from '../common/untrusted-sources';
import type { DreamCursor } from './dream-store';
import type { HistoryRecord } from './memory.types';

/** records given to the model per run (openspec memory: 50) */
export const DREAM_BATCH_RECORDS = 50;
/** characters of one record's content in the Dream input (tool results: DREAM_TOOL_CHARS) */
export const DREAM_MAX_RECORD_CHARS = 2000;
export const DREAM_TOOL_CHARS = 300;
export const NO_MEMORY_PLACEHOLDER = '(no memory yet)';
/** what Dream reads in place of records that followed untrusted content */
export const DREAM_LEFT_OUT_MARK = '(left out: the assistant read untrusted content here; nothing from it may be remembered)';

export const DREAM_ANALYSIS_PROMPT = [
  "You maintain the user's long-term memory file (MEMORY.md), which is shown to an AI assistant in every conversation.",
  'Compare the recent conversation excerpt with the current memory and write a short analysis report with three',
  'sections:',
  '## New facts - durable facts worth remembering that are not in memory yet (preferences, personal information,',
  'long-lived projects, decisions, recurring needs).',
  '## Updates - existing entries that the conversation corrects or refines, with the new wording.',
  '## Obsolete - existing entries that are no longer true.',
  'Ignore small talk, one-off questions and temporary details. Keep each fact in the language it was stated in.',
  'If nothing needs to change, write "No changes".',
].join('\n');

export const DREAM_EDITOR_PROMPT = [
  "You edit MEMORY.md, the user's long-term memory file. Apply the analysis report to the current file:",
  '- keep every entry that is still valid (never drop an entry the report does not mark as obsolete);',
  '- add the new facts, update the changed entries and remove the obsolete ones;',
  '- organise the file as Markdown grouped by category (a heading per category, one bullet per fact).',
  'Output only the complete new file content, without code fences or comments.',
  'If there is nothing worth recording at all, output nothing.',
].join('\n');

/** A record of the batch with the chat it comes from. */
export interface TaggedRecord {
  chatId: string;
  record: HistoryRecord;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} …[truncated]` : text;
}

/**
 * The records Dream must not read (openspec memory "Requirement: Dream safety"): in each chat, from its first tool
 * result of an untrusted source (a fetched page, search results, an MCP tool or resource, a Skill resource) on, every
 * tool result and assistant answer — they may carry what that content said. The owner's own messages stay.
 */
export function untrustedRecords(batch: readonly TaggedRecord[]): Set<TaggedRecord> {
  const tainted = new Set<TaggedRecord>();
  const taintedChats = new Set<string>();
  const argumentsById = new Map<string, string>();
  for (const tagged of batch) {
    const { chatId, record } = tagged;
    for (const call of record.tool_calls ?? []) argumentsById.set(call.id, call.function.arguments);
    if (record.role === 'tool' && record.name !== undefined) {
      if (untrustedSourceOf(record.name, argumentsById.get(record.tool_call_id ?? '') ?? '{}') !== null) taintedChats.add(chatId);
    }
    // a message of someone other than the owner is not the owner's: left out itself; attachments and a summary of
    // untrusted content taint what follows (the summary itself too)
    const marked = (record.untrusted_sources ?? []).length > 0;
    if (record.role === 'user' && marked) tainted.add(tagged);
    if ((record.role === 'user' || record.role === 'summary') && (marked || (record.attachments ?? []).length > 0)) taintedChats.add(chatId);
    if (taintedChats.has(chatId) && (record.role === 'tool' || record.role === 'assistant' || record.role === 'summary')) tainted.add(tagged);
  }
  return tainted;
}

/**
 * `[timestamp] ROLE: content` per record with non-empty content (openspec memory); the records in `leftOut` are not
 * shown, each run of them marked by one line saying so.
 */
export function formatDreamLines(batch: readonly TaggedRecord[], leftOut: ReadonlySet<TaggedRecord> = new Set()): string {
  const lines: string[] = [];
  let skipped = false;
  for (const tagged of batch) {
    const { record } = tagged;
    if (leftOut.has(tagged)) {
      if (!skipped) lines.push(`[${record.timestamp}] ${DREAM_LEFT_OUT_MARK}`);
      skipped = true;
      continue;
    }
    skipped = false;
    if (record.content === '') continue;
    const max = record.role === 'tool' ? DREAM_TOOL_CHARS : DREAM_MAX_RECORD_CHARS;
    lines.push(`[${record.timestamp}] ${record.role.toUpperCase()}: ${clip(record.content, max)}`);
  }
  return lines.join('\n');
}

/**
 * The new cursor of each chat: the largest cursor such that every new record of that chat up to it is in the batch
 * (a prefix in cursor order), so no record is ever skipped even if timestamps are not monotonic.
 */
export function advancedCursors(newRecords: ReadonlyMap<string, HistoryRecord[]>, batch: readonly TaggedRecord[]): DreamCursor {
  const taken = new Map<string, Set<number>>();
  for (const { chatId, record } of batch) {
    let set = taken.get(chatId);
    if (!set) taken.set(chatId, (set = new Set()));
    set.add(record.cursor);
  }
  const cursors: DreamCursor = {};
  for (const [chatId, records] of newRecords) {
    const set = taken.get(chatId);
    if (!set) continue;
    let last: number | null = null;
    for (const record of records) {
      if (!set.has(record.cursor)) break;
      last = record.cursor;
    }
    if (last !== null) cursors[chatId] = last;
  }
  return cursors;
}

/** Phase-2 output as file content: trimmed, an enclosing code fence removed, ending with a newline ('' if blank). */
export function normaliseMemoryOutput(raw: string): string {
  let text = raw.trim();
  const fenced = /^```[a-zA-Z]*\n([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  return text === '' ? '' : `${text}\n`;
}

/** Whether the rewrite drops more than half of the existing entries (the loss guard). */
export function dropsTooMuch(entriesBefore: number, entriesAfter: number): boolean {
  return entriesBefore > 0 && entriesAfter * 2 < entriesBefore;
}
