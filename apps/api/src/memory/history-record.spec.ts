import fc from 'fast-check';
import {
  failedTurnRecord,
  parseHistoryLine,
  recordToMessage,
  serializeHistoryRecord,
  toolCallsContent,
  turnRecords,
} from './history-record';
import { parseHistoryBuffer, scanHistoryBackward, type ReadAt } from './history-scan';
import type { HistoryRecord, ToolCallRecord } from './memory.types';

/** Python's json.dumps(ensure_ascii=False) with its default separators `", "` and `": "`. */
function pythonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonDumps(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

function readerOf(data: Buffer): ReadAt {
  return async (buffer, position) => data.copy(buffer, 0, position, Math.min(data.length, position + buffer.length));
}

const toolCallArb: fc.Arbitrary<ToolCallRecord> = fc.record({
  id: fc.string({ maxLength: 12 }),
  type: fc.constant('function' as const),
  function: fc.record({ name: fc.string({ minLength: 1, maxLength: 12 }), arguments: fc.json() }),
});

const textArb = fc.string({ unit: 'grapheme', maxLength: 40 });

const recordArb: fc.Arbitrary<HistoryRecord> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: textArb }),
  fc.record(
    { role: fc.constant('assistant' as const), content: textArb, cancelled: fc.constant(true) },
    { requiredKeys: ['role', 'content'] },
  ),
  fc
    .array(toolCallArb, { minLength: 1, maxLength: 3 })
    .map((calls) => ({ role: 'tool_calls' as const, content: toolCallsContent(calls), tool_calls: calls })),
  fc.record({
    role: fc.constant('tool' as const),
    content: textArb,
    tool_call_id: fc.string({ minLength: 1, maxLength: 8 }),
    name: fc.string({ maxLength: 8 }),
  }),
  fc.record(
    { role: fc.constant('summary' as const), content: textArb, keep_from_cursor: fc.integer({ min: 1, max: 400 }) },
    { requiredKeys: ['role', 'content'] },
  ),
).map((record) => ({ cursor: 0, timestamp: '2026-07-26 12:05', ...record }) as HistoryRecord);

/** Records with strictly increasing cursors, as the store writes them. */
const historyArb = fc.array(recordArb, { maxLength: 40 }).map((records) =>
  records.map((record, index) => ({ ...record, cursor: index + 1 })),
);

/** The reference's smart load (openspec memory) over all records, for comparison with the backward reader. */
function referenceSmartLoad(records: HistoryRecord[]): HistoryRecord[] {
  let summaryIndex = -1;
  records.forEach((record, index) => {
    if (record.role === 'summary') summaryIndex = index;
  });
  if (summaryIndex === -1) return records;
  const summary = records[summaryIndex]!;
  return records.filter((record) =>
    record.role === 'summary'
      ? false
      : summary.keep_from_cursor !== undefined
        ? record.cursor >= summary.keep_from_cursor
        : record.cursor > summary.cursor,
  );
}

describe('history records', () => {
  it('Scenario: a written record reads back unchanged (property)', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        expect(parseHistoryLine(serializeHistoryRecord(record))).toEqual(record);
      }),
    );
  });

  it('Scenario: records written by the reference (Python separators) are read (property)', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        expect(parseHistoryLine(pythonDumps(record))).toEqual(record);
      }),
    );
  });

  it('Scenario: any line is either a record or rejected, never an exception (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v))), (line) => {
        const record = parseHistoryLine(line);
        if (record !== null) {
          expect(Number.isSafeInteger(record.cursor)).toBe(true);
          expect(['user', 'assistant', 'tool_calls', 'tool', 'summary']).toContain(record.role);
          expect(typeof record.content).toBe('string');
        }
      }),
    );
  });

  it('rejects lines without an integer cursor or with an unknown role, and coerces content to a string', () => {
    expect(parseHistoryLine('{"role":"user","content":"x"}')).toBeNull();
    expect(parseHistoryLine('{"cursor":1.5,"role":"user","content":"x"}')).toBeNull();
    expect(parseHistoryLine('{"cursor":1,"role":"system","content":"x"}')).toBeNull();
    expect(parseHistoryLine('[1,2]')).toBeNull();
    expect(parseHistoryLine('{"cursor":1,"role":"user","content":{"a":1}}')?.content).toBe('{"a":1}');
    expect(parseHistoryLine('{"cursor":1,"role":"user","content":null}')?.content).toBe('');
  });

  it('Scenario: the backward reader agrees with a front-to-back read and the reference smart load (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        historyArb,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('{"broken', 'not json', '{"cursor":"x","role":"user"}', '  ')), {
          maxLength: 3,
        }),
        fc.constantFrom('', '{"cursor":99,"role":"user","con', '{"cursor":99,"role":"user","content":"x"}'),
        fc.integer({ min: 1, max: 97 }),
        async (records, garbage, tornTail, chunkBytes) => {
          const lines = records.map(serializeHistoryRecord);
          // garbage only in the middle: a malformed *last* line counts as torn
          for (const [at, text] of garbage) {
            if (lines.length > 1) lines.splice(1 + (at % (lines.length - 1)), 0, text);
          }
          const data = Buffer.from(lines.map((line) => `${line}\n`).join('') + tornTail, 'utf8');
          const forward = parseHistoryBuffer(data);
          expect(forward.records).toEqual(records);
          const full = await scanHistoryBackward(readerOf(data), data.length, { chunkBytes });
          expect(full.records).toEqual(referenceSmartLoad(records));
          expect(full.validSize).toBe(data.length - Buffer.byteLength(tornTail));
          expect(forward.validSize).toBe(full.validSize);
          expect(full.lastCursor).toBe(records.length > 0 ? records.length : null);
          const expectedMessages = full.records.map(recordToMessage).filter((message) => message !== null);
          const withoutSummary = full.summary && full.summary.content !== '' ? full.messages.slice(1) : full.messages;
          expect(withoutSummary).toEqual(expectedMessages);
        },
      ),
    );
  });

  it('Scenario: a malformed last complete line is treated as torn', async () => {
    const data = Buffer.from('{"cursor":1,"timestamp":"t","role":"user","content":"a"}\n{"cursor":2,"ro\n');
    const result = await scanHistoryBackward(readerOf(data), data.length);
    expect(result.records.map((r) => r.cursor)).toEqual([1]);
    expect(result.validSize).toBe(data.indexOf('\n') + 1);
    expect(result.malformedOffsets).toEqual([]);
    expect(parseHistoryBuffer(data).validSize).toBe(result.validSize);
  });

  it('Scenario: a traced turn maps to its records in order', () => {
    const calls: ToolCallRecord[] = [
      { id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{}' } },
      { id: 'c2', type: 'function', function: { name: 'save_memory', arguments: '{"content":"x"}' } },
    ];
    const records = turnRecords(
      { content: 'hi', mentioned_skills: [{ name: 'weather' }], selected_mcp_connectors: [] },
      [
        { role: 'assistant', content: 'thinking aloud', tool_calls: calls },
        { role: 'tool', tool_call_id: 'c1', name: 'list_dir', content: 'a.txt' },
        { role: 'tool', tool_call_id: 'c2', name: 'save_memory', content: 'Saved' },
        { role: 'assistant', content: '[Skill loaded: weather@v1]' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'ignored' },
      ],
      { content: 'partial', cancelled: true },
    );
    expect(records).toEqual([
      { role: 'user', content: 'hi', mentioned_skills: [{ name: 'weather' }] },
      { role: 'tool_calls', content: '[TOOL_CALLS: list_dir, save_memory]', tool_calls: calls },
      { role: 'tool', content: 'a.txt', tool_call_id: 'c1', name: 'list_dir' },
      { role: 'tool', content: 'Saved', tool_call_id: 'c2', name: 'save_memory' },
      { role: 'assistant', content: '[Skill loaded: weather@v1]' },
      { role: 'assistant', content: 'partial', cancelled: true },
    ]);
  });

  it('a failed user record keeps its marker when read back and is never a model message', () => {
    const pending = failedTurnRecord({ content: 'hi' }, { kind: 'auth', message: 'Authentication failed.' });
    const line = serializeHistoryRecord({ cursor: 3, timestamp: '2026-07-01 10:00', ...pending });
    const record = parseHistoryLine(line);
    expect(record).toMatchObject({ role: 'user', content: 'hi', error: { kind: 'auth', message: 'Authentication failed.' } });
    expect(recordToMessage(record as HistoryRecord)).toBeNull();
    // a malformed marker is dropped, the record stays a normal user message
    const odd = parseHistoryLine('{"cursor":4,"timestamp":"","role":"user","content":"x","error":"boom"}');
    expect(odd?.error).toBeUndefined();
    expect(recordToMessage(odd as HistoryRecord)).toEqual({ role: 'user', content: 'x' });
  });

  it('tool records keep ok and duration_ms, and the model message does not carry them', () => {
    const [, , tool] = turnRecords(
      { content: 'q' },
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
        { role: 'tool', content: 'a.txt', tool_call_id: 'c1', name: 'ls', ok: true, duration_ms: 7 },
      ],
      { content: 'done' },
    );
    expect(tool).toMatchObject({ role: 'tool', ok: true, duration_ms: 7 });
    const record = parseHistoryLine(serializeHistoryRecord({ cursor: 1, timestamp: '', ...tool! }));
    expect(record).toMatchObject({ ok: true, duration_ms: 7 });
    expect(recordToMessage(record as HistoryRecord)).toEqual({ role: 'tool', tool_call_id: 'c1', name: 'ls', content: 'a.txt' });
  });
});
