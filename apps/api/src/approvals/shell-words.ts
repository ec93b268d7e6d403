/**
 * A reader for a deliberately tiny subset of the POSIX shell language, chosen so that its reading is provably the one
 * of dash (`/bin/sh`, which runs every exec line: `/bin/sh -c <line>`). Everything outside the subset makes the line
 * unreadable (`{ ok: false, reason }`); nothing is guessed.
 *
 * The subset:
 * - words made of unquoted safe characters (`A-Z a-z 0-9 _ - . / , : @ % + =`, and `~` after such a character),
 *   single-quoted strings (any character but a line break or a control character), and double-quoted strings without
 *   `$`, backquote, backslash or `!`; adjacent pieces form one word (`l's'` is `ls`);
 * - blanks (space, tab) between words; the separators `&&`, `||`, `;` and `|`; a `;` may end the line;
 * - redirections `>`, `>>` and `<` with a target word, optionally after a descriptor `1` or `2`, and descriptor copies
 *   `>&1` / `>&2` (what a redirection may do is judged by the caller: command-analysis.ts allows only copies and
 *   output to `/dev/null`).
 *
 * Outside it, among others: comments and any other unquoted `#`, `$` in any form (`$x`, `${x}`, `$(…)`, `$'…'`),
 * backquotes, backslashes, globs (`* ? [`), braces, parentheses, `&`, `!`, a leading `~`, here-documents, `>|`, `<>`,
 * `<&`, `&>`, `|&`, `;;`, line breaks and other control characters, characters outside ASCII unless quoted, unpaired
 * surrogates, reserved words in command position (`if`, `for`, `{` …), and the builtins that run their arguments as
 * shell code (`eval`, `exec`, `.` …; exec-programs.ts CODE_BUILTINS). The reader is linear in the line's length and
 * never throws.
 */
import { CODE_BUILTINS, SHELL_KEYWORDS } from './exec-programs';

export interface ShellWord {
  /** the word after quote removal */
  value: string;
  /** the word as written */
  raw: string;
  start: number;
  end: number;
}

export interface ShellRedirect {
  op: '>' | '>>' | '<' | '>&';
  /** the descriptor written before the operator (`2>`), or null */
  fd: 1 | 2 | null;
  /** the target after quote removal: a file, or `1`/`2` for `>&` */
  target: string;
}

export interface ShellCommand {
  /** every word, leading `NAME=value` assignments included */
  words: ShellWord[];
  /** how many leading words are assignments */
  assignments: number;
  /** the program: the first word after the assignments (after quote removal) */
  program: string;
  redirects: ShellRedirect[];
  /** UTF-16 offsets of the command's words and redirections in the line (end exclusive), separators excluded */
  span: { start: number; end: number };
}

export type ShellReading = { ok: true; commands: ShellCommand[] } | { ok: false; reason: string };

export const MAX_COMMAND_CHARS = 16_384;

/** Unquoted characters that are literal in every word position. */
const SAFE = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./,:@%+=') SAFE[c.charCodeAt(0)] = 1;

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

class Unreadable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

function isBlank(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

function endsWord(c: string | undefined): boolean {
  return c === undefined || isBlank(c) || c === ';' || c === '&' || c === '|' || c === '<' || c === '>';
}

/** Why an unquoted character is outside the subset. */
function unquotedReason(c: string): string {
  switch (c) {
    case '#':
      return 'comment (#)';
    case '$':
      return 'expansion ($)';
    case '`':
      return 'command substitution (`)';
    case '\\':
      return 'backslash';
    case '*':
    case '?':
    case '[':
      return `glob pattern (${c})`;
    case '{':
    case '}':
      return `braces (${c})`;
    case '(':
    case ')':
      return `parentheses (${c})`;
    case '!':
      return 'exclamation mark (!)';
    case '~':
      return 'tilde expansion (~)';
    default:
      return c.charCodeAt(0) > 0x7e ? 'a character outside ASCII that is not quoted' : `unusual character (${c})`;
  }
}

/** Line breaks, control characters and unpaired surrogates are refused anywhere, quoted or not. */
function checkCharacters(line: string): void {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (code === 0x0a || code === 0x0d) throw new Unreadable('line break');
    if ((code < 0x20 && code !== 0x09) || (code >= 0x7f && code <= 0x9f)) throw new Unreadable('control character');
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = line.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) throw new Unreadable('unpaired surrogate');
      i++;
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      throw new Unreadable('unpaired surrogate');
    }
  }
}

/** Reads one word starting at `start` (a character that does not end a word). */
function readWord(line: string, start: number): ShellWord {
  let value = '';
  let i = start;
  while (!endsWord(line[i])) {
    const c = line[i] as string;
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close === -1) throw new Unreadable('unterminated quote');
      value += line.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        const q = line[j];
        if (q === '$' || q === '`' || q === '\\' || q === '!') throw new Unreadable(`${q} inside double quotes`);
      }
      if (j >= line.length) throw new Unreadable('unterminated quote');
      value += line.slice(i + 1, j);
      i = j + 1;
    } else if (c === '~' && i > start && SAFE[line.charCodeAt(i - 1)] === 1 && line[i - 1] !== '=' && line[i - 1] !== ':') {
      // `HEAD~1`: a tilde after a literal character is literal (dash expands only a leading one, or one after
      // `=`/`:` in an assignment)
      value += c;
      i++;
    } else if (c.charCodeAt(0) < 128 && SAFE[c.charCodeAt(0)] === 1) {
      value += c;
      i++;
    } else {
      throw new Unreadable(unquotedReason(c));
    }
  }
  return { value, raw: line.slice(start, i), start, end: i };
}

interface Draft {
  words: ShellWord[];
  redirects: ShellRedirect[];
  start: number;
  end: number;
}

function finish(draft: Draft): ShellCommand {
  let assignments = 0;
  while (assignments < draft.words.length && ASSIGNMENT.test((draft.words[assignments] as ShellWord).raw)) assignments++;
  const programWord = draft.words[assignments];
  if (programWord === undefined) {
    throw new Unreadable(draft.words.length === 0 ? 'redirection without a command' : 'assignment without a command');
  }
  const program = programWord.value;
  // a reserved word is only recognised unquoted and first, but a quoted or later one is refused as well
  if (SHELL_KEYWORDS.has(program) || (draft.words[0] !== undefined && SHELL_KEYWORDS.has(draft.words[0].raw))) {
    throw new Unreadable(`shell keyword ${program}`);
  }
  if (CODE_BUILTINS.has(program)) throw new Unreadable(`${program} runs its arguments as shell code`);
  return { words: draft.words, assignments, program, redirects: draft.redirects, span: { start: draft.start, end: draft.end } };
}

function readLine(line: string): ShellCommand[] {
  if (line.length > MAX_COMMAND_CHARS) throw new Unreadable('command too long');
  checkCharacters(line);
  const commands: ShellCommand[] = [];
  let draft: Draft | null = null;
  let lastSeparator: string | null = null;
  const extend = (start: number, end: number): Draft => {
    draft ??= { words: [], redirects: [], start, end };
    draft.end = end;
    return draft;
  };
  let i = 0;
  const readRedirect = (fd: 1 | 2 | null, start: number): void => {
    const c = line[i];
    const next = line[i + 1];
    let op: ShellRedirect['op'];
    if (c === '>') {
      if (next === '|') throw new Unreadable('redirection >|');
      op = next === '>' ? '>>' : next === '&' ? '>&' : '>';
    } else {
      if (next === '<') throw new Unreadable('here-document');
      if (next === '>' || next === '&') throw new Unreadable(`redirection <${next}`);
      op = '<';
    }
    i += op.length;
    while (isBlank(line[i])) i++;
    if (endsWord(line[i])) throw new Unreadable('redirection without a target');
    const target = readWord(line, i);
    i = target.end;
    // dash reads digits right before `<`/`>` as the next redirection's descriptor, anything else as a word
    if (line[i] === '<' || line[i] === '>') throw new Unreadable('redirection written against a word');
    if (op === '>&' && target.raw !== '1' && target.raw !== '2') throw new Unreadable('descriptor copy other than >&1 or >&2');
    extend(start, target.end).redirects.push({ op, fd, target: target.value });
  };
  for (;;) {
    while (isBlank(line[i])) i++;
    const c = line[i];
    if (c === undefined) break;
    if (c === ';' || c === '&' || c === '|') {
      const next = line[i + 1];
      let op: string;
      if (c === ';') {
        if (next === ';') throw new Unreadable(';;');
        op = ';';
      } else if (c === '&') {
        if (next !== '&') throw new Unreadable(next === '>' ? 'redirection &>' : 'background (&)');
        op = '&&';
      } else {
        if (next === '&') throw new Unreadable('|&');
        op = next === '|' ? '||' : '|';
      }
      if (draft === null) throw new Unreadable(`${op} without a command before it`);
      commands.push(finish(draft));
      draft = null;
      lastSeparator = op;
      i += op.length;
      continue;
    }
    if (c === '<' || c === '>') {
      readRedirect(null, i);
      continue;
    }
    const word = readWord(line, i);
    i = word.end;
    if (line[i] === '<' || line[i] === '>') {
      if (word.raw !== '1' && word.raw !== '2') throw new Unreadable('redirection written against a word');
      readRedirect(word.raw === '1' ? 1 : 2, word.start);
      continue;
    }
    extend(word.start, word.end).words.push(word);
  }
  if (draft !== null) commands.push(finish(draft));
  else if (lastSeparator !== null && lastSeparator !== ';') throw new Unreadable(`line ends with ${lastSeparator}`);
  if (commands.length === 0) throw new Unreadable('no command');
  return commands;
}

/** Reads a command line into simple commands, or says which construct is outside the subset. Never throws. */
export function readShellLine(line: string): ShellReading {
  try {
    return { ok: true, commands: readLine(line) };
  } catch (error) {
    if (error instanceof Unreadable) return { ok: false, reason: error.reason };
    return { ok: false, reason: 'unreadable command' };
  }
}
