/**
 * What an `exec` command line runs, for standing rules ("always allow `git`") and Skills' `Bash(git:*)` patterns.
 *
 * The line is parsed with `shell-quote` into simple commands (split at `&&`, `||`, `;`, `|`, `&`, `(`, `)`); each
 * simple command's program is its first word after leading `NAME=value` assignments (and after `env` followed only by
 * assignments). A rule or pattern approves a line only when it covers EVERY simple command in it, so a rule for `git`
 * never approves `git status && rm -rf /`.
 *
 * Anything the parser cannot see through makes the line unanalysable, and an unanalysable line is always asked:
 * newlines, command substitution (`` ` ``, `$(`), process substitution (`<(`, `>(`), here-documents and file
 * redirections (except `2>&1`-style descriptor copies and redirections to /dev/null), a program that comes from a
 * variable or a glob, and shell keywords (`if`, `for`, `{` …).
 *
 * Programs that run other programs (`sudo`, `sh`, `eval`, `xargs`, `env -i`, `nohup`, …) and relative paths
 * (`./script.sh`, whose content the agent can rewrite) are never offered as a standing-rule scope and never covered by a
 * program rule. Absolute paths are scoped as written (`/usr/bin/git` is not `git`).
 */
import { parse, type ParseEntry } from 'shell-quote';

export interface SimpleCommand {
  /** the program as written (a bare name or an absolute path) */
  program: string;
  /** the program and its arguments, unquoted */
  words: string[];
}

export type CommandAnalysis = { ok: true; commands: SimpleCommand[] } | { ok: false; reason: string };

/** Programs that run another program given in their arguments: a rule for them would approve anything. */
export const LAUNCHER_PROGRAMS: ReadonlySet<string> = new Set([
  'sudo', 'doas', 'su', 'pkexec', 'env', 'command', 'builtin', 'exec', 'eval', 'source', '.', 'nohup', 'nice',
  'ionice', 'time', 'timeout', 'xargs', 'parallel', 'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh',
  'busybox', 'stdbuf', 'setsid', 'chroot', 'unshare', 'nsenter', 'strace', 'ltrace', 'watch', 'script', 'flock',
  'chrt', 'taskset', 'firejail', 'bwrap', 'systemd-run', 'runuser', 'trap',
]);

const SHELL_KEYWORDS: ReadonlySet<string> = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'in', 'function',
  'select', '{', '}', '!', '[[', ']]', 'coproc',
]);

const SEPARATORS: ReadonlySet<string> = new Set(['&&', '||', ';', '|', '&', '(', ')', ';;', '|&', ';&', ';;&']);
/** marker the variable lookup puts into expanded words (never in a program name) */
const VARIABLE_MARK = '\u0000';
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
const BARE_PROGRAM = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;
const ABSOLUTE_PROGRAM = /^\/[A-Za-z0-9._+\-/]+$/;
const MAX_COMMAND_CHARS = 16_384;

function isOp(entry: ParseEntry): entry is Extract<ParseEntry, { op: string }> & { op: string } {
  return typeof entry === 'object' && entry !== null && 'op' in entry && (entry as { op: string }).op !== 'glob';
}

function isGlob(entry: ParseEntry): entry is { op: 'glob'; pattern: string } {
  return typeof entry === 'object' && entry !== null && 'op' in entry && (entry as { op: string }).op === 'glob';
}

function isComment(entry: ParseEntry): boolean {
  return typeof entry === 'object' && entry !== null && 'comment' in entry;
}

/** Splits a command line into simple commands, or says why it cannot be analysed. */
export function analyzeCommand(command: string): CommandAnalysis {
  if (command.length > MAX_COMMAND_CHARS) return { ok: false, reason: 'command too long' };
  if (/[\r\n]/.test(command)) return { ok: false, reason: 'multi-line command' };
  if (command.includes('`') || command.includes('$(')) return { ok: false, reason: 'command substitution' };
  if (command.includes('<(') || command.includes('>(')) return { ok: false, reason: 'process substitution' };
  let entries: ParseEntry[];
  try {
    entries = parse(command, (key: string) => `${VARIABLE_MARK}$${key}`);
  } catch {
    return { ok: false, reason: 'unparsable command' };
  }
  const groups: ParseEntry[][] = [[]];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as ParseEntry;
    if (isComment(entry)) break;
    if (isOp(entry)) {
      if (SEPARATORS.has(entry.op)) {
        groups.push([]);
        continue;
      }
      // `2>&1`, `>&2`: descriptor copies; `> /dev/null`, `2> /dev/null`: discarded output
      const target = entries[i + 1];
      if ((entry.op === '>&' || entry.op === '<&') && typeof target === 'string' && /^\d+$|^-$/.test(target)) {
        i++;
        continue;
      }
      if ((entry.op === '>' || entry.op === '>>' || entry.op === '&>') && target === '/dev/null') {
        i++;
        continue;
      }
      return { ok: false, reason: `redirection ${entry.op}` };
    }
    (groups[groups.length - 1] as ParseEntry[]).push(entry);
  }
  const commands: SimpleCommand[] = [];
  for (const group of groups) {
    // a trailing descriptor number of a copy (`2` of `2>&1`) is left on the words; harmless for matching
    if (group.length === 0) continue;
    const words: string[] = [];
    for (const entry of group) {
      if (isGlob(entry)) words.push(entry.pattern);
      else if (typeof entry === 'string') words.push(entry);
      else return { ok: false, reason: 'unsupported shell syntax' };
    }
    let start = 0;
    while (start < words.length && ASSIGNMENT.test(words[start] as string)) start++;
    if (words[start] === 'env') {
      let next = start + 1;
      while (next < words.length && ASSIGNMENT.test(words[next] as string)) next++;
      // `env` with options (-i, -u NAME, -S …) or alone is a launcher; `env X=1 git` runs git
      if (next < words.length && !(words[next] as string).startsWith('-')) start = next;
    }
    if (start >= words.length) continue; // assignments only
    const program = words[start] as string;
    if (program.includes(VARIABLE_MARK) || isGlob(group[start] as ParseEntry)) {
      return { ok: false, reason: 'program from a variable or glob' };
    }
    if (SHELL_KEYWORDS.has(program)) return { ok: false, reason: `shell keyword ${program}` };
    if (!BARE_PROGRAM.test(program) && !ABSOLUTE_PROGRAM.test(program) && !program.includes('/')) {
      return { ok: false, reason: 'unusual program name' };
    }
    commands.push({ program, words: words.slice(start) });
  }
  if (commands.length === 0) return { ok: false, reason: 'no command' };
  return { ok: true, commands };
}

/** Whether a program may be the scope of a standing rule (not a launcher, not a relative path). */
export function isRuleProgram(program: string): boolean {
  if (LAUNCHER_PROGRAMS.has(program)) return false;
  if (BARE_PROGRAM.test(program)) return true;
  return ABSOLUTE_PROGRAM.test(program) && !program.split('/').includes('..') && !LAUNCHER_PROGRAMS.has(program.split('/').pop() ?? '');
}

/**
 * The program an "always allow" of this command would store: only when every simple command runs the same program
 * and that program may be a rule scope; null otherwise (the decision then applies once).
 */
export function alwaysProgram(command: string): string | null {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) return null;
  const programs = new Set(analysis.commands.map((c) => c.program));
  if (programs.size !== 1) return null;
  const [program] = [...programs] as [string];
  return isRuleProgram(program) ? program : null;
}

/** What pre-approves a simple command: a program (any arguments) or a word prefix (`Bash(git status:*)`). */
export type CommandMatcher = { kind: 'program'; program: string } | { kind: 'prefix'; words: string[]; exact: boolean };

function matches(command: SimpleCommand, matcher: CommandMatcher): boolean {
  if (matcher.kind === 'program') return isRuleProgram(matcher.program) && command.program === matcher.program;
  if (matcher.words.length === 0) return false;
  if (LAUNCHER_PROGRAMS.has(command.program)) return false;
  if (matcher.exact && command.words.length !== matcher.words.length) return false;
  if (command.words.length < matcher.words.length) return false;
  return matcher.words.every((word, index) => command.words[index] === word);
}

/** Whether every simple command of the line is covered by one of the matchers (false for an unanalysable line). */
export function commandCovered(command: string, matchers: readonly CommandMatcher[]): boolean {
  if (matchers.length === 0) return false;
  const analysis = analyzeCommand(command);
  if (!analysis.ok) return false;
  return analysis.commands.every((simple) => matchers.some((matcher) => matches(simple, matcher)));
}
