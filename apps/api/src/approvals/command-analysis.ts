/**
 * What an `exec` command line runs, for standing rules and Skills' `Bash(…)` patterns.
 *
 * The line is read by shell-words.ts, a reader for a tiny subset of the shell language whose reading is dash's
 * (`/bin/sh -c <line>` runs every exec line); anything outside the subset makes the line unanalysable. On top of that
 * reading, a line is analysable only when every simple command in it
 * - starts with its program (no `NAME=value` prefix: `PATH=…`, `LD_PRELOAD=…` or `GIT_SSH_COMMAND=…` change what
 *   runs),
 * - names it as a bare name found through PATH or an absolute path (a relative path's file is the agent's to rewrite),
 * - is not a launcher or a builtin that changes how the rest of the line is read (exec-programs.ts LAUNCHER_PROGRAMS:
 *   `sudo`, `env`, `xargs`, `sh`, `timeout`, `export`, `cd` …),
 * - redirects only by descriptor copies (`2>&1`, `>&2`) and output to exactly `/dev/null`.
 * An unanalysable line is always asked: no rule or pattern covers it.
 *
 * A rule or pattern covers a line only when it covers EVERY simple command of it, so a rule for `ls` never approves
 * `ls && rm -rf /`. A program-wide rule (`exec_program`) covers a command only for the programs of
 * exec-programs.ts RULE_PROGRAMS (they run no other code through any option); any other program can only get an exact
 * rule (`exec_command`: the words must equal the rule's argv). Rules never cover a program given by its path.
 */
import type { StandingRuleScope } from '@cashcode/contracts';
import { BARE_PROGRAM, ABSOLUTE_PROGRAM, LAUNCHER_PROGRAMS, programBaseName, RULE_PROGRAMS } from './exec-programs';
import { readShellLine, type ShellCommand } from './shell-words';

export interface SimpleCommand {
  /** the program as written, after quote removal (a bare name or an absolute path) */
  program: string;
  /** the program and its arguments, after quote removal */
  words: string[];
  /** UTF-16 offsets of the command in the line (its words and redirections; end exclusive) */
  span: { start: number; end: number };
}

export type CommandAnalysis = { ok: true; commands: SimpleCommand[] } | { ok: false; reason: string };

/** One command of a line for the approval card: its program and where it stands. */
export interface CommandSegment {
  program: string;
  start: number;
  end: number;
}

export type CommandSegments = { ok: true; commands: CommandSegment[] } | { ok: false; reason: string };

/** Why a command of the subset is still not analysable for rules, or null. */
function strictRefusal(command: ShellCommand): string | null {
  if (command.assignments > 0) return 'a NAME=value assignment before the program';
  const program = command.program;
  if (program.includes('/')) {
    if (!ABSOLUTE_PROGRAM.test(program) || program.split('/').includes('..')) return 'a program given by a relative path';
  } else if (!BARE_PROGRAM.test(program)) {
    return 'an unusual program name';
  }
  if (LAUNCHER_PROGRAMS.has(programBaseName(program))) return `${programBaseName(program)} runs other commands or changes how the line runs`;
  for (const redirect of command.redirects) {
    if (redirect.op === '>&') continue;
    if ((redirect.op === '>' || redirect.op === '>>') && redirect.target === '/dev/null') continue;
    return 'a redirection other than to /dev/null or a descriptor copy';
  }
  return null;
}

/** Splits a command line into simple commands, or says why no rule can read it. */
export function analyzeCommand(command: string): CommandAnalysis {
  const reading = readShellLine(command);
  if (!reading.ok) return reading;
  const commands: SimpleCommand[] = [];
  for (const simple of reading.commands) {
    const refusal = strictRefusal(simple);
    if (refusal !== null) return { ok: false, reason: refusal };
    commands.push({ program: simple.program, words: simple.words.map((word) => word.value), span: { ...simple.span } });
  }
  return { ok: true, commands };
}

/**
 * The separate commands of a line for the approval card (`commands` of `approval_request`): wider than
 * analyzeCommand (a file redirection, an assignment or a launcher does not stop the split), but only within the same
 * dash-exact subset, so each span is a command dash runs; `ok: false` with the reason otherwise.
 */
export function commandSegments(command: string): CommandSegments {
  const reading = readShellLine(command);
  if (!reading.ok) return reading;
  return { ok: true, commands: reading.commands.map((simple) => ({ program: simple.program, ...simple.span })) };
}

/** Whether a program may be the scope of a program-wide rule (`exec_program`). */
export function isRuleProgram(program: string): boolean {
  return RULE_PROGRAMS.has(program);
}

/** Whether a program may get an exact rule (`exec_command`): a bare name that analyzeCommand accepts. */
export function isExactRuleProgram(program: string): boolean {
  return BARE_PROGRAM.test(program) && !LAUNCHER_PROGRAMS.has(program);
}

/**
 * The scope an "always allow" of this line would store: `exec_program` when every command runs the same program of
 * RULE_PROGRAMS; `exec_command` with its words when the line is one simple command of another program; null otherwise
 * (the decision then applies once).
 */
export function alwaysExecScope(command: string): StandingRuleScope | null {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) return null;
  const programs = new Set(analysis.commands.map((c) => c.program));
  const [program] = [...programs] as [string];
  if (programs.size === 1 && isRuleProgram(program)) return { kind: 'exec_program', program };
  const [only] = analysis.commands;
  if (analysis.commands.length === 1 && only !== undefined && isExactRuleProgram(only.program)) {
    return { kind: 'exec_command', argv: [...only.words] };
  }
  return null;
}

/** Why a stored rule covers nothing any more (shown with the rule), or null when it is in force. */
export function ruleInactiveReason(scope: StandingRuleScope): string | null {
  if (scope.kind === 'exec_program' && !isRuleProgram(scope.program)) {
    return scope.program.includes('/')
      ? 'A rule for a program given by its path covers nothing: the file at a path can change.'
      : `${scope.program} can run other programs or code through its options, so a rule for it with any arguments ` +
          'covers nothing. Allow an exact command instead.';
  }
  if (scope.kind === 'exec_command' && !isExactRuleProgram(scope.argv[0] ?? '')) {
    return `${scope.argv[0] ?? 'This program'} runs other commands or changes how the line runs; no rule covers it.`;
  }
  return null;
}

/**
 * What pre-approves a simple command: a program with any arguments (`exec_program` rules, RULE_PROGRAMS only) or
 * words (Skills' `Bash(git status:*)` prefixes and `exec_command` rules, which are exact).
 */
export type CommandMatcher = { kind: 'program'; program: string } | { kind: 'prefix'; words: string[]; exact: boolean };

/**
 * How much a matcher allows, for the owner's screen: `exact` one command; `prefix` a program of RULE_PROGRAMS (or a
 * prefix of it) with any further arguments; `any-code` a prefix of any other program with free arguments, which can
 * run anything (`git -c alias.x='!…'`, `find -exec`, `python -c`).
 */
export function patternWidth(matcher: CommandMatcher): 'exact' | 'prefix' | 'any-code' {
  if (matcher.kind === 'program') return isRuleProgram(matcher.program) ? 'prefix' : 'any-code';
  if (matcher.exact) return 'exact';
  return isRuleProgram(matcher.words[0] ?? '') ? 'prefix' : 'any-code';
}

function matches(command: SimpleCommand, matcher: CommandMatcher): boolean {
  if (matcher.kind === 'program') return isRuleProgram(matcher.program) && command.program === matcher.program;
  if (matcher.words.length === 0 || !isExactRuleProgram(command.program)) return false;
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

/** The matchers of the standing rules (inactive ones match nothing anyway). */
export function ruleMatchers(scopes: readonly StandingRuleScope[]): CommandMatcher[] {
  const matchers: CommandMatcher[] = [];
  for (const scope of scopes) {
    if (scope.kind === 'exec_program') matchers.push({ kind: 'program', program: scope.program });
    else if (scope.kind === 'exec_command') matchers.push({ kind: 'prefix', words: [...scope.argv], exact: true });
  }
  return matchers;
}
