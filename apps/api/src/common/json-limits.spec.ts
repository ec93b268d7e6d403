import { jsonNestingExceeds, MAX_JSON_DEPTH, parseJsonLimited, verifyJsonBodyDepth } from './json-limits';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('json-limits', () => {
  it('Scenario: a body at the nesting limit is parsed and validated; one level more is refused (the scan)', () => {
    expect(jsonNestingExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonNestingExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonNestingExceeds(Buffer.from(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonNestingExceeds(Buffer.from(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    // siblings do not add up: width is not depth
    expect(jsonNestingExceeds(`[${Array.from({ length: 1000 }, () => nested(MAX_JSON_DEPTH - 1)).join(',')}]`)).toBe(false);
    expect(jsonNestingExceeds('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(jsonNestingExceeds('{"a":{"b":[1,{"c":2}]}}', 3)).toBe(true);
  });

  it('Scenario: brackets inside strings do not count as nesting (the scan)', () => {
    const inString = JSON.stringify({ s: `${'['.repeat(500)}\\"{[` });
    expect(jsonNestingExceeds(inString, 1)).toBe(false);
    expect(jsonNestingExceeds(Buffer.from(JSON.stringify({ s: `é${'{'.repeat(100)}` })), 1)).toBe(false);
    // an escaped quote does not end the string; an escaped backslash does not escape the quote after it
    expect(jsonNestingExceeds('["\\"[[["]', 1)).toBe(false);
    expect(jsonNestingExceeds('["\\\\",[[]]]', 2)).toBe(true);
  });

  it('parseJsonLimited never throws', () => {
    expect(parseJsonLimited('{"a":[1]}')).toEqual({ ok: true, value: { a: [1] } });
    expect(parseJsonLimited(nested(60_000))).toMatchObject({ ok: false, reason: 'too_deep' });
    expect(parseJsonLimited('{"a":')).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('verifyJsonBodyDepth throws a 400 / 415 error body-parser passes on', () => {
    expect(() => verifyJsonBodyDepth({}, {}, Buffer.from(nested(10)), 'utf-8')).not.toThrow();
    expect(() => verifyJsonBodyDepth({}, {}, Buffer.from(nested(65)), 'utf-8')).toThrow(
      expect.objectContaining({ status: 400, type: 'entity.too.deep' }),
    );
    expect(() => verifyJsonBodyDepth({}, {}, Buffer.from(nested(65), 'utf16le'), 'utf-16le')).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    expect(() => verifyJsonBodyDepth({}, {}, Buffer.from('{}'), 'utf-32')).toThrow(
      expect.objectContaining({ status: 415, type: 'charset.unsupported' }),
    );
  });
});
