import fc from 'fast-check';
import { decodeFrame, parseFrame, parseFrameText, pythonStringRepr } from './frame-parser';

const llm = { provider: 'openai_compatible', model: 'm1' };

describe('frame parser', () => {
  it('Scenario: a typed envelope is required', () => {
    for (const text of ['', 'hello', '[1]', '{"type": 1}', '{}', '{bad json', 'null', '"x"']) {
      expect(parseFrameText(text)).toEqual({
        kind: 'reject',
        reason: 'invalid_envelope',
        error: { event: 'error', detail: 'typed JSON envelope required', code: 'invalid_envelope' },
      });
    }
  });

  it('Scenario: approval frames carry a chat id, a call id and one of the three decisions', () => {
    expect(parseFrameText('{"type":"approval","chat_id":"c1","call_id":"call_1","decision":"allow_always"}')).toEqual({
      kind: 'approval',
      chatId: 'c1',
      callId: 'call_1',
      decision: 'allow_always',
    });
    expect(parseFrameText('{"type":"approval","chat_id":"c 1","call_id":"x","decision":"deny"}')).toMatchObject({
      reason: 'invalid_chat_id',
    });
    for (const bad of [
      { call_id: 'x', decision: 'yes' },
      { call_id: 'x' },
      { call_id: '', decision: 'deny' },
      { call_id: 'a b', decision: 'deny' },
      { call_id: 7, decision: 'deny' },
      { call_id: 'x'.repeat(257), decision: 'deny' },
    ]) {
      expect(parseFrameText(JSON.stringify({ type: 'approval', chat_id: 'c1', ...bad }))).toMatchObject({
        kind: 'reject',
        reason: 'invalid_frame',
        error: { event: 'error', chat_id: 'c1', code: 'invalid_frame' },
      });
    }
  });

  it('Scenario: surrounding whitespace is trimmed and extra keys are ignored', () => {
    expect(parseFrameText('  \n {"type":"ping","extra":1}  ')).toEqual({ kind: 'ping' });
  });

  it('Scenario: unknown types are named with Python repr', () => {
    expect(parseFrameText('{"type":"subscribe"}')).toMatchObject({
      error: { detail: "unknown type: 'subscribe'", code: 'unknown_type' },
    });
    expect(pythonStringRepr("it's")).toBe(`"it's"`);
    expect(pythonStringRepr('a\'b"c')).toBe(`'a\\'b"c'`);
    expect(pythonStringRepr('tab\there\\')).toBe(`'tab\\there\\\\'`);
    expect(pythonStringRepr('中文')).toBe(`'中文'`);
  });

  it('Scenario: attach and cancel need a valid chat id (error without chat_id)', () => {
    expect(parseFrameText('{"type":"attach","chat_id":"abc_1:2-3"}')).toEqual({ kind: 'attach', chatId: 'abc_1:2-3' });
    expect(parseFrameText('{"type":"stop","chat_id":"c1"}')).toEqual({ kind: 'cancel', chatId: 'c1' });
    for (const id of ['', 'a/b', 'x'.repeat(65), 5, null]) {
      for (const type of ['attach', 'cancel', 'stop', 'message']) {
        const parsed = parseFrameText(JSON.stringify({ type, chat_id: id, content: 'hi', metadata: { llm } }));
        expect(parsed).toEqual({
          kind: 'reject',
          reason: 'invalid_chat_id',
          error: { event: 'error', detail: 'invalid chat_id', code: 'invalid_chat_id' },
        });
      }
    }
  });

  it('Scenario: message content must be a non-blank string (error with chat_id)', () => {
    for (const content of [undefined, '', '   \n', 42]) {
      expect(parseFrameText(JSON.stringify({ type: 'message', chat_id: 'c1', content, metadata: { llm } }))).toEqual({
        kind: 'reject',
        reason: 'missing_content',
        error: { event: 'error', detail: 'missing content', chat_id: 'c1', code: 'missing_content' },
      });
    }
  });

  it('Scenario: content is forwarded untrimmed and metadata sanitised', () => {
    const parsed = parseFrameText(
      JSON.stringify({
        type: 'message',
        chat_id: 'c1',
        content: '  hi  ',
        metadata: { llm: { provider: 'ollama', model: ' m ' }, mentioned_skills: [{ name: 'weather', label: ' W ' }], x: 1 },
      }),
    );
    expect(parsed).toEqual({
      kind: 'message',
      chatId: 'c1',
      content: '  hi  ',
      metadata: { llm: { provider: 'ollama', model: 'm' }, mentioned_skills: [{ name: 'weather', label: 'W' }] },
      attachments: [],
    });
  });

  it('Scenario: A message frame with malformed attachments is refused', () => {
    const frame = (attachments: unknown) =>
      parseFrameText(JSON.stringify({ type: 'message', chat_id: 'c1', content: 'hi', metadata: { llm: { provider: 'ollama', model: 'm' } }, attachments }));
    expect(frame(['attachments/c1/a.txt'])).toMatchObject({ kind: 'message', attachments: ['attachments/c1/a.txt'] });
    expect(frame(null)).toMatchObject({ kind: 'message', attachments: [] });
    for (const bad of ['attachments/c1/a.txt', [1], [''], ['x'.repeat(513)], Array.from({ length: 21 }, (_, i) => `a${i}`), {}]) {
      expect(frame(bad)).toMatchObject({ kind: 'reject', reason: 'invalid_attachments', error: { code: 'invalid_attachments', chat_id: 'c1' } });
    }
  });

  it('Scenario: metadata errors carry the chat id', () => {
    expect(parseFrameText('{"type":"message","chat_id":"c1","content":"hi"}')).toMatchObject({
      reason: 'invalid_selection_metadata',
      error: { detail: 'llm selection is required', chat_id: 'c1' },
    });
  });

  it('Scenario: a WS frame nested 60,000 levels deep is an error event (parser)', () => {
    const tooDeep = {
      kind: 'reject',
      reason: 'too_deep',
      error: { event: 'error', detail: 'frame is nested too deeply (more than 64 levels)', code: 'too_deep' },
    };
    expect(parseFrameText(`{"type":"ping","pad":${'['.repeat(60_000)}${']'.repeat(60_000)}}`)).toEqual(tooDeep);
    expect(parseFrameText(`{"type":"ping","pad":${'{"a":'.repeat(64)}1${'}'.repeat(64)}}`)).toEqual(tooDeep);
    expect(parseFrameText(`{"type":"ping","pad":${'{"a":'.repeat(63)}1${'}'.repeat(63)}}`)).toEqual({ kind: 'ping' });
  });

  it('Scenario: binary frames are UTF-8 decoded; undecodable ones are ignored', () => {
    expect(parseFrame(Buffer.from('{"type":"ping"}', 'utf8'), true)).toEqual({ kind: 'ping' });
    expect(parseFrame(Buffer.from([0xff, 0xfe, 0x7b]), true)).toEqual({ kind: 'ignore', reason: 'invalid_utf8' });
    expect(decodeFrame([Buffer.from('{"ty'), Buffer.from('pe":"ping"}')], false)).toBe('{"type":"ping"}');
  });

  it('Scenario: any input yields a frame or a reply, never an exception (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.uint8Array().map((a) => Buffer.from(a))), (input) => {
        const parsed = typeof input === 'string' ? parseFrame(input, false) : parseFrame(input, true);
        expect(['ping', 'new_chat', 'attach', 'cancel', 'message', 'ignore', 'reject']).toContain(parsed.kind);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.record({
          type: fc.constantFrom('message', 'attach', 'cancel', 'stop', 'ping', 'x'),
          chat_id: fc.oneof(fc.string(), fc.constant('c1')),
          content: fc.anything(),
          metadata: fc.anything(),
        }),
        (frame) => {
          const parsed = parseFrameText(JSON.stringify(frame) ?? '');
          if (parsed.kind === 'reject') expect(typeof parsed.error.detail).toBe('string');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('chat_action frames', () => {
  it('Scenario: chat action frames are validated', () => {
    expect(parseFrameText(JSON.stringify({ type: 'chat_action', chat_id: 'c1', action: 'regenerate', metadata: { llm } }))).toEqual({
      kind: 'chat_action',
      chatId: 'c1',
      action: 'regenerate',
      metadata: { llm },
    });
    expect(
      parseFrameText(JSON.stringify({ type: 'chat_action', chat_id: 'c1', action: 'edit', cursor: 3, content: ' new ', metadata: { llm } })),
    ).toEqual({ kind: 'chat_action', chatId: 'c1', action: 'edit', cursor: 3, content: ' new ', metadata: { llm } });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ action: 'undo', metadata: { llm } }, 'invalid_frame'],
      [{ metadata: { llm } }, 'invalid_frame'],
      [{ action: 'edit', cursor: -1, content: 'x', metadata: { llm } }, 'invalid_frame'],
      [{ action: 'edit', cursor: '3', content: 'x', metadata: { llm } }, 'invalid_frame'],
      [{ action: 'edit', cursor: 1.5, content: 'x', metadata: { llm } }, 'invalid_frame'],
      [{ action: 'edit', cursor: 3, content: '  ', metadata: { llm } }, 'missing_content'],
      [{ action: 'edit', cursor: 3, metadata: { llm } }, 'missing_content'],
      [{ action: 'regenerate' }, 'invalid_selection_metadata'],
    ];
    for (const [fields, code] of bad) {
      expect(parseFrameText(JSON.stringify({ type: 'chat_action', chat_id: 'c1', ...fields }))).toMatchObject({
        kind: 'reject',
        error: { event: 'error', chat_id: 'c1', code },
      });
    }
    expect(parseFrameText('{"type":"chat_action","chat_id":"bad id","action":"continue"}')).toMatchObject({
      reason: 'invalid_chat_id',
    });
  });
});
