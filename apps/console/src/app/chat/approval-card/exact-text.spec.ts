import { describe, expect, it } from 'vitest';

import { exactPieces, exactSegments, hasHiddenCharacters } from './exact-text';

describe('exact text of an approval', () => {
  it('keeps printable text as it is', () => {
    expect(exactPieces('echo "password=\'" ; id')).toEqual([{ kind: 'text', text: 'echo "password=\'" ; id' }]);
  });

  it('makes control, direction and zero-width characters visible', () => {
    const pieces = exactPieces('ls\u202Edi ;\u200Bx\u0007\n\u{E0041}');
    expect(pieces).toEqual([
      { kind: 'text', text: 'ls' },
      { kind: 'hidden', code: 'U+202E', name: 'RLO', newline: false },
      { kind: 'text', text: 'di ;' },
      { kind: 'hidden', code: 'U+200B', name: 'ZWSP', newline: false },
      { kind: 'text', text: 'x' },
      { kind: 'hidden', code: 'U+0007', name: 'CONTROL', newline: false },
      { kind: 'hidden', code: 'U+000A', name: 'LF', newline: true },
      { kind: 'hidden', code: 'U+E0041', name: 'TAG', newline: false },
    ]);
  });

  it('joins the pieces back into the same characters, badges aside', () => {
    const text = 'a\u2066b\u2069c\u00ADd\uFEFFe\u3164f';
    const plain = exactPieces(text)
      .map((piece) => (piece.kind === 'text' ? piece.text : ''))
      .join('');
    expect(plain).toBe('abcdef');
    expect(exactPieces(text).filter((piece) => piece.kind === 'hidden').map((piece) => piece.kind === 'hidden' && piece.name)).toEqual([
      'LRI',
      'PDI',
      'SHY',
      'BOM',
      'HANGUL FILLER',
    ]);
  });

  it('keeps the line breaks of pretty-printed arguments as layout', () => {
    expect(exactPieces('{\n  "a": 1\n}', true)).toEqual([{ kind: 'text', text: '{\n  "a": 1\n}' }]);
  });

  it('cuts a line at the command spans, gaps included', () => {
    const line = 'echo "password=\'" ; id > HIDDEN_RAN.txt ; echo "\'"';
    const spans = [
      { program: 'echo', start: 0, end: 17 },
      { program: 'id', start: 20, end: 39 },
      { program: 'echo', start: 42, end: line.length },
    ];
    const segments = exactSegments(line, spans);
    expect(segments.map((segment) => [segment.command, segment.pieces.map((p) => (p.kind === 'text' ? p.text : p.code)).join('')])).toEqual([
      [0, 'echo "password=\'"'],
      [null, ' ; '],
      [1, 'id > HIDDEN_RAN.txt'],
      [null, ' ; '],
      [2, 'echo "\'"'],
    ]);
    expect(segments.filter((segment) => segment.command !== null).map((segment) => segment.program)).toEqual(['echo', 'id', 'echo']);
  });

  it('says when there is a hidden character worth a warning (not for tabs and line breaks alone)', () => {
    expect(hasHiddenCharacters(exactSegments('a\tb\nc', null))).toBe(false);
    expect(hasHiddenCharacters(exactSegments('a\u202Eb', null))).toBe(true);
  });
});
