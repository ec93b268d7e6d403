/**
 * Scanning history.jsonl without owning the file: the store hands in a positional reader, so these functions are
 * pure with respect to I/O and can be measured (bytes read) and property-tested.
 *
 * Line rules shared by every reader (ARCHITECTURE.md "On-disk layout"; openspec memory "Requirement: Torn and malformed
 * lines"):
 * - the bytes after the last `\n` are a torn final line (a crash mid-append): dropped, repaired before the next append;
 * - if the last non-blank complete line does not parse, it is torn as well (dropped and repaired);
 * - any other malformed complete line is skipped and reported (its byte offset);
 * - blank lines are ignored.
 */
import { currentBranch } from './history-branch';
import { parseHistoryLine, recordToMessage, summaryToMessage } from './history-record';
import type { ChatMessage, HistoryRecord } from './memory.types';

/** Reads `buffer.length` bytes at `position` (short reads only at end of file); resolves to the bytes read. */
export type ReadAt = (buffer: Buffer, position: number) => Promise<number>;

export const DEFAULT_CHUNK_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

interface Segment {
  /** the line's bytes, without the newline */
  bytes: Buffer;
  /** byte offset of the line's first byte */
  start: number;
  /** true for the bytes after the final newline (possibly empty) */
  isTail: boolean;
}

/** Yields the file's lines from the last to the first, reading `chunkBytes` at a time from the end. */
async function* segmentsBackward(readAt: ReadAt, size: number, chunkBytes: number): AsyncGenerator<Segment> {
  let position = size;
  /** bytes between `position` and the end of the next line to yield, as chunks in file order */
  let pending: Buffer[] = [];
  let isTail = true;
  while (position > 0) {
    const length = Math.min(chunkBytes, position);
    position -= length;
    const chunk = Buffer.allocUnsafe(length);
    const read = await readAt(chunk, position);
    if (read !== length) throw new Error('history file changed while reading');
    if (chunk.lastIndexOf(NEWLINE) === -1) {
      pending.unshift(chunk);
      continue;
    }
    const data = pending.length > 0 ? Buffer.concat([chunk, ...pending]) : chunk;
    let end = data.length;
    let newline = data.lastIndexOf(NEWLINE, end - 1);
    while (newline >= 0) {
      yield { bytes: data.subarray(newline + 1, end), start: position + newline + 1, isTail };
      isTail = false;
      end = newline;
      newline = end > 0 ? data.lastIndexOf(NEWLINE, end - 1) : -1;
    }
    pending = [data.subarray(0, end)];
  }
  yield { bytes: pending.length === 1 ? pending[0]! : Buffer.concat(pending), start: 0, isTail };
}

function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== NEWLINE) return false;
  }
  return true;
}

export interface SmartLoadResult {
  /** model messages: the summary message (if any) followed by the kept records, in order */
  messages: ChatMessage[];
  /** the kept non-summary records, in file order */
  records: HistoryRecord[];
  /** the last summary record, if the chat was consolidated */
  summary: HistoryRecord | null;
  /** cursor of the last valid record in the file (null when none) */
  lastCursor: number | null;
  /** file length without the torn tail; less than `size` when a repair is due */
  validSize: number;
  size: number;
  /** byte offsets of malformed complete lines that were skipped */
  malformedOffsets: number[];
  bytesRead: number;
}

/**
 * Smart load (openspec memory), reading from the end: records are collected backwards until the last `summary` record;
 * past it, only records with `cursor >= keep_from_cursor` (or `> summary.cursor` without keep_from_cursor) are kept,
 * and reading stops at the first older record. Cost is O(kept tail), except for a chat never consolidated.
 * With `stopAtFirstRecord` only the tail is inspected (torn-line repair and last cursor before an append).
 */
export async function scanHistoryBackward(
  readAt: ReadAt,
  size: number,
  options: { chunkBytes?: number; stopAtFirstRecord?: boolean } = {},
): Promise<SmartLoadResult> {
  let bytesRead = 0;
  const countingRead: ReadAt = async (buffer, position) => {
    const read = await readAt(buffer, position);
    bytesRead += read;
    return read;
  };
  const collected: HistoryRecord[] = [];
  const malformedOffsets: number[] = [];
  let validSize = size;
  let lastCursor: number | null = null;
  let lastLineChecked = false;
  let summary: HistoryRecord | null = null;
  let threshold = Number.NEGATIVE_INFINITY;

  for await (const segment of segmentsBackward(countingRead, size, options.chunkBytes ?? DEFAULT_CHUNK_BYTES)) {
    if (segment.isTail) {
      if (segment.bytes.length > 0) validSize = segment.start;
      continue;
    }
    if (isBlank(segment.bytes)) continue;
    const record = parseHistoryLine(segment.bytes.toString('utf8'));
    if (record === null) {
      if (!lastLineChecked) validSize = segment.start;
      else malformedOffsets.push(segment.start);
      lastLineChecked = true;
      continue;
    }
    lastLineChecked = true;
    if (lastCursor === null) {
      lastCursor = record.cursor;
      if (options.stopAtFirstRecord) break;
    }
    if (summary === null) {
      if (record.role === 'summary') {
        summary = record;
        threshold = record.keep_from_cursor ?? record.cursor + 1;
      } else {
        collected.push(record);
      }
      continue;
    }
    if (record.cursor < threshold) break;
    if (record.role !== 'summary') collected.push(record);
  }

  collected.reverse();
  // only the current branch is model context (regenerate, edit and continue append records that replace others)
  const records = currentBranch(summary === null ? collected : collected.filter((record) => record.cursor >= threshold));
  const messages: ChatMessage[] = [];
  if (summary !== null) {
    const first = summaryToMessage(summary);
    if (first) messages.push(first);
  }
  for (const record of records) {
    const message = recordToMessage(record);
    if (message) messages.push(message);
  }
  malformedOffsets.reverse();
  return { messages, records, summary, lastCursor, validSize, size, malformedOffsets, bytesRead };
}

/** Where a record's line is in history.jsonl: its first byte and its length in bytes, without the newline. */
export interface LinePosition {
  offset: number;
  length: number;
}

export interface ParsedHistory {
  /** every valid record in file order */
  records: HistoryRecord[];
  /** the line of each record (parallel to `records`) */
  positions: LinePosition[];
  validSize: number;
  malformedOffsets: number[];
}

/** Parses a whole history file front to back with the same line rules (used by the public message list). */
export function parseHistoryBuffer(data: Buffer): ParsedHistory {
  const lines: Array<{ start: number; end: number }> = [];
  let start = 0;
  for (;;) {
    const newline = data.indexOf(NEWLINE, start);
    if (newline === -1) break;
    lines.push({ start, end: newline });
    start = newline + 1;
  }
  let validSize = start < data.length ? start : data.length;
  const parsed: Array<{ record: HistoryRecord | null; start: number; length: number }> = [];
  for (const line of lines) {
    const bytes = data.subarray(line.start, line.end);
    if (isBlank(bytes)) continue;
    parsed.push({ record: parseHistoryLine(bytes.toString('utf8')), start: line.start, length: line.end - line.start });
  }
  const last = parsed[parsed.length - 1];
  if (last && last.record === null) {
    validSize = last.start;
    parsed.pop();
  }
  const records: HistoryRecord[] = [];
  const positions: LinePosition[] = [];
  const malformedOffsets: number[] = [];
  for (const entry of parsed) {
    if (entry.record) {
      records.push(entry.record);
      positions.push({ offset: entry.start, length: entry.length });
    } else malformedOffsets.push(entry.start);
  }
  return { records, positions, validSize, malformedOffsets };
}
