import fc from 'fast-check';
import { Bm25Index, isCjkCodePoint, splitCamelCase, tokenize } from './bm25';

describe('tokenize', () => {
  it('Scenario: ASCII words are lowercased and short tokens dropped', () => {
    expect(tokenize('Read a FILE, then x-ray 42!')).toEqual(['read', 'file', 'then', 'ray', '42']);
  });

  it('Scenario: camelCase and acronyms are split', () => {
    expect(splitCamelCase('getWeatherData')).toBe('get Weather Data');
    expect(splitCamelCase('HTTPServer')).toBe('HTTP Server');
    expect(tokenize('parseHTTPResponse mcp_test_stdio_mcp_say_hello')).toEqual([
      'parse',
      'http',
      'response',
      'mcp',
      'test',
      'stdio',
      'mcp',
      'say',
      'hello',
    ]);
  });

  it('Scenario: CJK runs add bigrams', () => {
    expect(tokenize('天气预报 weather')).toEqual(['weather', '天气', '气预', '预报']);
    // a single CJK character forms no bigram
    expect(tokenize('天 a')).toEqual([]);
    // runs are separated by non-CJK characters
    expect(tokenize('文件x搜索')).toEqual(['文件', '搜索']);
    // katakana and an extension-B character (two UTF-16 units) are CJK
    expect(tokenize('カタ𠀀')).toEqual(['カタ', 'タ𠀀']);
  });

  it('Scenario: CJK ranges follow the spec', () => {
    for (const cp of [0x4e00, 0x9fff, 0x3400, 0x20000, 0x2a700, 0xf900, 0x3000, 0x3040, 0x30a0, 0xff00, 0xffef]) {
      expect(isCjkCodePoint(cp)).toBe(true);
    }
    for (const cp of [0x41, 0xe9, 0x2fff, 0xac00, 0x2b740]) expect(isCjkCodePoint(cp)).toBe(false);
  });

  /** The spec's definition, written with regexes (the implementation is a single-pass scanner). */
  function referenceTokenize(text: string): string[] {
    const tokens: string[] = [];
    for (const match of splitCamelCase(text).matchAll(/[A-Za-z0-9]+/g)) {
      if (match[0].length >= 2) tokens.push(match[0].toLowerCase());
    }
    let run: string[] = [];
    const flush = () => {
      for (let i = 0; i + 1 < run.length; i++) tokens.push(run[i]! + run[i + 1]!);
      run = [];
    };
    for (const char of text) {
      if (isCjkCodePoint(char.codePointAt(0)!)) run.push(char);
      else if (run.length > 0) flush();
    }
    flush();
    return tokens;
  }

  it('Scenario: the scanner equals the regex definition (property)', () => {
    const alphabet = fc.constantFrom(...'aZ0bY9 _-.HTTPServer天气预报カ𠀀，é\u3000'.split(''), '𠀀', 'getV2Data', 'ABCd', 'x\uD840');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme' }), fc.array(alphabet, { maxLength: 30 }).map((a) => a.join(''))), (text) => {
        expect(tokenize(text)).toEqual(referenceTokenize(text));
      }),
      { numRuns: 500 },
    );
  });

  it('Scenario: every token is lowercase ASCII of length ≥ 2 or a CJK bigram (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        for (const token of tokenize(text)) {
          const chars = Array.from(token);
          const ascii = /^[a-z0-9]{2,}$/.test(token);
          const bigram = chars.length === 2 && chars.every((c) => isCjkCodePoint(c.codePointAt(0)!));
          expect(ascii || bigram).toBe(true);
        }
      }),
    );
  });
});

describe(Bm25Index.name, () => {
  function reference(docs: string[][], query: string[], k1 = 1.2, b = 0.75): number[] {
    const n = docs.length;
    const avgdl = docs.reduce((sum, d) => sum + d.length, 0) / n;
    return docs.map((doc) => {
      let score = 0;
      for (const term of query) {
        const df = docs.filter((d) => d.includes(term)).length;
        if (df === 0) continue;
        const tf = doc.filter((t) => t === term).length;
        if (tf === 0) continue;
        const idf = Math.log((n - df + 0.5) / (df + 0.5) + 1);
        score += (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * doc.length) / avgdl));
      }
      return score;
    });
  }

  it('Scenario: scores match the BM25 formula of the spec', () => {
    const texts = ['weather forecast for the city', 'read a file from disk', 'weather weather alerts', 'say hello'];
    const index = new Bm25Index<number>();
    texts.forEach((text, i) => index.add(i, text));
    const hits = index.search('weather alerts weather', 10);
    const expected = reference(texts.map(tokenize), tokenize('weather alerts weather'));
    expect(hits.map((h) => h.key)).toEqual([2, 0]);
    for (const hit of hits) expect(hit.score).toBeCloseTo(expected[hit.key]!, 10);
  });

  it('Scenario: only documents sharing a term are returned, limited and sorted', () => {
    const index = new Bm25Index<string>();
    index.add('a', 'alpha beta');
    index.add('b', 'gamma delta');
    index.add('c', 'alpha alpha beta');
    expect(index.search('alpha', 10).map((h) => h.key)).toEqual(['c', 'a']);
    expect(index.search('alpha', 1).map((h) => h.key)).toEqual(['c']);
    expect(index.search('zeta', 10)).toEqual([]);
    expect(index.search('', 10)).toEqual([]);
  });

  it('Scenario: ties keep insertion order', () => {
    const index = new Bm25Index<string>();
    for (const key of ['x', 'y', 'z']) index.add(key, 'same words here');
    expect(index.search('words', 10).map((h) => h.key)).toEqual(['x', 'y', 'z']);
  });

  it('Scenario: compaction after many removals keeps scores and order', () => {
    const index = new Bm25Index<number>();
    const text = (i: number) => `doc ${i % 7 === 0 ? 'seven' : 'other'} w${i % 13} common`;
    for (let i = 0; i < 3000; i++) index.add(i, text(i));
    for (let i = 0; i < 3000; i++) if (i % 10 !== 0) index.remove(i);
    for (let i = 3000; i < 3100; i++) index.add(i, text(i));
    const fresh = new Bm25Index<number>();
    for (let i = 0; i < 3100; i++) if (i % 10 === 0 || i >= 3000) fresh.add(i, text(i));
    expect(index.size).toBe(fresh.size);
    for (const query of ['seven', 'w3 common', 'other w5']) {
      const a = index.search(query, 40);
      const b = fresh.search(query, 40);
      expect(a.map((h) => h.key)).toEqual(b.map((h) => h.key));
      a.forEach((hit, i) => expect(hit.score).toBeCloseTo(b[i]!.score, 9));
    }
  });

  it('Scenario: incremental add/remove equals a fresh build (property)', () => {
    const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'epsilon', '天气', 'readFile');
    const doc = fc.array(word, { minLength: 0, maxLength: 6 }).map((w) => w.join(' '));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.option(doc, { nil: undefined })), { maxLength: 30 }),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        (ops, queryWords) => {
          const incremental = new Bm25Index<number>();
          const live = new Map<number, string>();
          for (const [key, text] of ops) {
            if (text === undefined) {
              incremental.remove(key);
              live.delete(key);
            } else {
              incremental.add(key, text);
              live.delete(key);
              live.set(key, text);
            }
          }
          const fresh = new Bm25Index<number>();
          for (const [key, text] of live) fresh.add(key, text);
          const query = queryWords.join(' ');
          const a = incremental.search(query, 50);
          const b = fresh.search(query, 50);
          expect(a.map((h) => h.key)).toEqual(b.map((h) => h.key));
          a.forEach((hit, i) => expect(hit.score).toBeCloseTo(b[i]!.score, 9));
        },
      ),
    );
  });
});
