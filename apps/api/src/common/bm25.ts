/**
 * The one BM25 tokenizer and index used by every search (tool_search, skill search, …), openspec mcp.
 *
 * Tokenizer: camelCase is split (`aB` → `a B`, `ABCd` → `AB Cd`, a digit counts as lower case), the text is split on
 * every character that is not an ASCII letter or digit, tokens are lowercased and kept when at least 2 characters long;
 * then every run of ≥ 2 consecutive CJK characters adds its bigrams (by code point).
 *
 * Index: BM25 with k1 = 1.2, b = 0.75 (the usual constants, also those of SQLite FTS5's bm25() that ranks the session
 * search), idf = ln((N − df + 0.5)/(df + 0.5) + 1),
 * tf_norm = tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl)). Repeated query terms count repeatedly; only documents that
 * share a term with the query are scored; results are sorted by score, ties in insertion order. Documents are added
 * and removed incrementally (no rebuild).
 */

export interface Bm25Parameters {
  k1: number;
  b: number;
}

export const BM25_DEFAULTS: Readonly<Bm25Parameters> = { k1: 1.2, b: 0.75 };

export interface Bm25Hit<K> {
  key: K;
  score: number;
}

const CAMEL_LOWER_UPPER = /([a-z0-9])([A-Z])/g;
/** between the capitals of an acronym and the capitalised word after it (`HTMLParser` → `HTML Parser`) */
const CAMEL_ACRONYM = /(?<=[A-Z])(?=[A-Z][a-z])/g;

/** Whether a code point is in one of the CJK ranges (openspec mcp "Requirement: Shared BM25 search"). */
export function isCjkCodePoint(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x3000 && cp <= 0x303f) ||
    (cp >= 0x3040 && cp <= 0x309f) ||
    (cp >= 0x30a0 && cp <= 0x30ff) ||
    (cp >= 0xff00 && cp <= 0xffef)
  );
}

/** Splits camelCase words: `getWeatherData` → `get Weather Data`, `HTTPServer` → `HTTP Server`. */
export function splitCamelCase(text: string): string {
  return text.replace(CAMEL_LOWER_UPPER, '$1 $2').replace(CAMEL_ACRONYM, ' ');
}

function isUpper(code: number): boolean {
  return code >= 65 && code <= 90;
}

function isLower(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Lowercased camelCase parts (≥ 2 chars) of an ASCII word that contains an upper-case letter. */
function pushCamelParts(word: string, tokens: string[]): void {
  let start = 0;
  for (let j = 1; j < word.length; j++) {
    const prev = word.charCodeAt(j - 1);
    const cur = word.charCodeAt(j);
    if (!isUpper(cur)) continue;
    const lowerToUpper = isLower(prev) || isDigit(prev);
    const acronymEnd = isUpper(prev) && j + 1 < word.length && isLower(word.charCodeAt(j + 1));
    if (lowerToUpper || acronymEnd) {
      if (j - start >= 2) tokens.push(word.slice(start, j).toLowerCase());
      start = j;
    }
  }
  if (word.length - start >= 2) tokens.push(word.slice(start).toLowerCase());
}

/**
 * The search tokens of a text (see the file comment): one pass over the text; ASCII tokens in order, then the CJK
 * bigrams in order (the same result as splitting with splitCamelCase and the regexes, without their allocations).
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let bigrams: string[] | null = null;
  let previousCjk: string | null = null;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (isLower(code) || isUpper(code) || isDigit(code)) {
      previousCjk = null;
      const start = i;
      let upper = false;
      while (i < length) {
        const c = text.charCodeAt(i);
        if (isLower(c) || isDigit(c)) i++;
        else if (isUpper(c)) {
          upper = true;
          i++;
        } else break;
      }
      if (!upper) {
        if (i - start >= 2) tokens.push(text.slice(start, i));
      } else {
        pushCamelParts(text.slice(start, i), tokens);
      }
      continue;
    }
    if (code < 0x3000) {
      previousCjk = null;
      i++;
      continue;
    }
    let cp = code;
    let width = 1;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        width = 2;
      }
    }
    if (isCjkCodePoint(cp)) {
      const char = width === 1 ? text[i]! : text.slice(i, i + 2);
      if (previousCjk !== null) (bigrams ??= []).push(previousCjk + char);
      previousCjk = char;
    } else {
      previousCjk = null;
    }
    i += width;
  }
  if (bigrams) for (const bigram of bigrams) tokens.push(bigram);
  return tokens;
}

interface IndexedDocument<K> {
  key: K;
  length: number;
  /** distinct terms */
  terms: string[];
}

/** Documents containing a term: parallel arrays of document ids and term frequencies (removed ids are skipped). */
interface Posting {
  ids: number[];
  tfs: number[];
  /** live documents in the posting (the document frequency) */
  df: number;
}

/**
 * An incremental BM25 index over documents identified by a key. Documents get increasing ids (insertion order, used
 * to break score ties); removal tombstones the id and the postings are compacted once tombstones dominate.
 */
export class Bm25Index<K> {
  private readonly params: Bm25Parameters;
  private readonly ids = new Map<K, number>();
  private docs: Array<IndexedDocument<K> | undefined> = [];
  private readonly postings = new Map<string, Posting>();
  private totalLength = 0;
  /** posting entries that belong to removed documents */
  private garbage = 0;
  private entries = 0;

  constructor(params: Partial<Bm25Parameters> = {}) {
    this.params = { ...BM25_DEFAULTS, ...params };
  }

  get size(): number {
    return this.ids.size;
  }

  has(key: K): boolean {
    return this.ids.has(key);
  }

  keys(): IterableIterator<K> {
    return this.ids.keys();
  }

  /** Adds (or replaces) a document from its text. */
  add(key: K, text: string): void {
    this.addTokens(key, tokenize(text));
  }

  /** Adds (or replaces) a document from already computed tokens (given in one or more parts, in order). */
  addTokens(key: K, ...parts: ReadonlyArray<readonly string[]>): void {
    this.remove(key);
    const id = this.docs.length;
    const terms: string[] = [];
    let length = 0;
    for (const tokens of parts) {
      length += tokens.length;
      for (const term of tokens) {
        let posting = this.postings.get(term);
        if (!posting) {
          posting = { ids: [], tfs: [], df: 0 };
          this.postings.set(term, posting);
        }
        const last = posting.ids.length - 1;
        if (last >= 0 && posting.ids[last] === id) {
          posting.tfs[last]!++;
          continue;
        }
        posting.ids.push(id);
        posting.tfs.push(1);
        posting.df++;
        this.entries++;
        terms.push(term);
      }
    }
    this.docs.push({ key, length, terms });
    this.ids.set(key, id);
    this.totalLength += length;
  }

  /** Removes a document; returns whether it was indexed. */
  remove(key: K): boolean {
    const id = this.ids.get(key);
    if (id === undefined) return false;
    const doc = this.docs[id]!;
    this.ids.delete(key);
    this.docs[id] = undefined;
    this.totalLength -= doc.length;
    for (const term of doc.terms) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      posting.df--;
      this.garbage++;
      if (posting.df === 0) {
        this.postings.delete(term);
        this.garbage -= posting.ids.length;
        this.entries -= posting.ids.length;
      }
    }
    if (this.garbage > 1024 && this.garbage * 2 > this.entries) this.compact();
    return true;
  }

  clear(): void {
    this.ids.clear();
    this.docs = [];
    this.postings.clear();
    this.totalLength = 0;
    this.garbage = 0;
    this.entries = 0;
  }

  /** The best `limit` documents for the query, best first (empty for a query without tokens). */
  search(query: string, limit: number): Bm25Hit<K>[] {
    return this.searchTokens(tokenize(query), limit);
  }

  searchTokens(queryTokens: readonly string[], limit: number): Bm25Hit<K>[] {
    const n = this.ids.size;
    if (n === 0 || limit <= 0 || queryTokens.length === 0) return [];
    const { k1, b } = this.params;
    const avgdl = this.totalLength / n || 1;
    const scores = new Float64Array(this.docs.length);
    const touched: number[] = [];
    for (const term of queryTokens) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const idf = Math.log((n - posting.df + 0.5) / (posting.df + 0.5) + 1);
      const { ids, tfs } = posting;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const doc = this.docs[id];
        if (!doc) continue;
        const tf = tfs[i]!;
        const norm = (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / avgdl));
        if (scores[id] === 0) touched.push(id);
        scores[id]! += idf * norm;
      }
    }
    return topK(touched, scores, limit).map((id) => ({ key: this.docs[id]!.key, score: scores[id]! }));
  }

  /** Renumbers the live documents densely (keeping their order) and drops removed ids from the postings. */
  private compact(): void {
    const renumber = new Int32Array(this.docs.length).fill(-1);
    const docs: Array<IndexedDocument<K> | undefined> = [];
    this.docs.forEach((doc, id) => {
      if (!doc) return;
      renumber[id] = docs.length;
      this.ids.set(doc.key, docs.length);
      docs.push(doc);
    });
    this.docs = docs;
    this.entries = 0;
    for (const posting of this.postings.values()) {
      const ids: number[] = [];
      const tfs: number[] = [];
      for (let i = 0; i < posting.ids.length; i++) {
        const next = renumber[posting.ids[i]!]!;
        if (next < 0) continue;
        ids.push(next);
        tfs.push(posting.tfs[i]!);
      }
      posting.ids = ids;
      posting.tfs = tfs;
      this.entries += ids.length;
    }
    this.garbage = 0;
  }
}

/** true when document a ranks before b: higher score, then earlier insertion (lower id) */
function before(a: number, b: number, scores: Float64Array): boolean {
  return scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
}

/** The best `k` ids, best first, with a bounded heap (O(n log k)). */
function topK(candidates: readonly number[], scores: Float64Array, k: number): number[] {
  // min-heap by rank: heap[0] is the worst of the kept entries
  const heap: number[] = [];
  const swap = (i: number, j: number) => {
    const tmp = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = tmp;
  };
  for (const id of candidates) {
    if (heap.length < k) {
      heap.push(id);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!before(heap[parent]!, heap[i]!, scores)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (before(id, heap[0]!, scores)) {
      heap[0] = id;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let worst = i;
        if (left < heap.length && before(heap[worst]!, heap[left]!, scores)) worst = left;
        if (right < heap.length && before(heap[worst]!, heap[right]!, scores)) worst = right;
        if (worst === i) break;
        swap(i, worst);
        i = worst;
      }
    }
  }
  return heap.sort((a, b) => (before(a, b, scores) ? -1 : 1));
}
