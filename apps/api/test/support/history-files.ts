/**
 * history.jsonl fixtures for the memory specs: records as the file holds them (one JSON line each), and the records a
 * file holds, checking that every line is a record and the file ends with a newline.
 */
import { promises as fs } from 'node:fs';
import { parseHistoryLine, serializeHistoryRecord } from '../../src/memory/history-record';
import type { HistoryRecord } from '../../src/memory/memory.types';

/** Every record of a history.jsonl, in file order. */
export async function readLines(file: string): Promise<HistoryRecord[]> {
  const text = await fs.readFile(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const record = parseHistoryLine(line);
      expect(record).not.toBeNull();
      return record!;
    });
}

/** One history.jsonl line (with its newline) of a record; timestamp and content have defaults. */
export function line(record: Partial<HistoryRecord> & { cursor: number; role: HistoryRecord['role'] }): string {
  return `${serializeHistoryRecord({ timestamp: '2026-07-01 09:00', content: '', ...record })}\n`;
}
