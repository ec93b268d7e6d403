/**
 * What the approval card shows of a command or argument text: every character as it is, except the ones a reader
 * cannot see or that change how the text around them looks — control characters, bidirectional overrides and
 * isolates, zero-width and other invisible characters — which become visible badges (`U+202E RLO`), so the owner
 * approves exactly the bytes that will run. With the server's command spans, the parts of the line that are separate
 * commands are marked one by one.
 */
import type { ExecCommandSpan } from '@cashcode/contracts';

export type ExactPiece =
  | { kind: 'text'; text: string }
  /** a character made visible: its code point and a short name */
  | { kind: 'hidden'; code: string; name: string; newline: boolean };

export interface ExactSegment {
  /** the index of the command this segment belongs to (0-based), or null between commands */
  command: number | null;
  program: string | null;
  pieces: ExactPiece[];
}

/** Short names of the invisible or layout-changing characters; any other C0/C1 control shows as its code point. */
const NAMED: ReadonlyMap<number, string> = new Map([
  [0x09, 'TAB'],
  [0x0a, 'LF'],
  [0x0b, 'VT'],
  [0x0c, 'FF'],
  [0x0d, 'CR'],
  [0x1b, 'ESC'],
  [0x7f, 'DEL'],
  [0x85, 'NEL'],
  [0xa0, 'NBSP'],
  [0xad, 'SHY'],
  [0x034f, 'CGJ'],
  [0x061c, 'ALM'],
  [0x115f, 'HANGUL FILLER'],
  [0x1160, 'HANGUL FILLER'],
  [0x180e, 'MVS'],
  [0x200b, 'ZWSP'],
  [0x200c, 'ZWNJ'],
  [0x200d, 'ZWJ'],
  [0x200e, 'LRM'],
  [0x200f, 'RLM'],
  [0x2028, 'LINE SEPARATOR'],
  [0x2029, 'PARAGRAPH SEPARATOR'],
  [0x202a, 'LRE'],
  [0x202b, 'RLE'],
  [0x202c, 'PDF'],
  [0x202d, 'LRO'],
  [0x202e, 'RLO'],
  [0x2060, 'WJ'],
  [0x2061, 'INVISIBLE'],
  [0x2062, 'INVISIBLE'],
  [0x2063, 'INVISIBLE'],
  [0x2064, 'INVISIBLE'],
  [0x2066, 'LRI'],
  [0x2067, 'RLI'],
  [0x2068, 'FSI'],
  [0x2069, 'PDI'],
  [0x3164, 'HANGUL FILLER'],
  [0xfeff, 'BOM'],
  [0xffa0, 'HANGUL FILLER'],
]);

function hiddenName(code: number): string | null {
  const named = NAMED.get(code);
  if (named !== undefined) return named;
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 'CONTROL';
  // other format characters a reader cannot see: interlinear annotations, deprecated format controls, variation
  // selectors, tags, noncharacters and lone surrogates
  if ((code >= 0x206a && code <= 0x206f) || (code >= 0xfff9 && code <= 0xfffb)) return 'FORMAT';
  if ((code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xe0100 && code <= 0xe01ef)) return 'VARIATION SELECTOR';
  if (code >= 0xe0000 && code <= 0xe007f) return 'TAG';
  if (code >= 0xd800 && code <= 0xdfff) return 'SURROGATE';
  if ((code & 0xfffe) === 0xfffe || (code >= 0xfdd0 && code <= 0xfdef)) return 'NONCHARACTER';
  return null;
}

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The text as pieces: runs of plain characters, and each hidden character on its own. `layoutNewlines`: line breaks
 * are the text's own layout (pretty-printed JSON, whose strings escape theirs) and stay plain.
 */
export function exactPieces(text: string, layoutNewlines = false): ExactPiece[] {
  const pieces: ExactPiece[] = [];
  let plain = '';
  for (let i = 0; i < text.length; ) {
    const code = text.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    const name = layoutNewlines && code === 0x0a ? null : hiddenName(code);
    if (name === null) {
      plain += text.slice(i, i + width);
    } else {
      if (plain !== '') pieces.push({ kind: 'text', text: plain });
      plain = '';
      pieces.push({ kind: 'hidden', code: codePoint(code), name, newline: code === 0x0a });
    }
    i += width;
  }
  if (plain !== '') pieces.push({ kind: 'text', text: plain });
  return pieces;
}

/**
 * The text cut at the command spans (offsets into `text`, in order): one segment per command and one for each gap
 * (separators, redirections, spaces). Without spans the whole text is one segment.
 */
export function exactSegments(text: string, spans: readonly ExecCommandSpan[] | null, layoutNewlines = false): ExactSegment[] {
  if (spans === null || spans.length === 0) return [{ command: null, program: null, pieces: exactPieces(text, layoutNewlines) }];
  const segments: ExactSegment[] = [];
  let at = 0;
  const gap = (end: number) => {
    if (end > at) segments.push({ command: null, program: null, pieces: exactPieces(text.slice(at, end)) });
  };
  spans.forEach((span, index) => {
    gap(span.start);
    segments.push({ command: index, program: span.program, pieces: exactPieces(text.slice(span.start, span.end)) });
    at = span.end;
  });
  gap(text.length);
  return segments;
}

/** Whether the segments hold a character the card had to make visible (the card then says so). */
export function hasHiddenCharacters(segments: readonly ExactSegment[]): boolean {
  return segments.some((segment) => segment.pieces.some((piece) => piece.kind === 'hidden' && !(piece.newline || piece.name === 'TAB')));
}
