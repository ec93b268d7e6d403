/**
 * fast-check arbitraries of exec command lines for the command analyser's property and differential tests: lines of
 * the analyser's shell subset (safe words, quotes, separators, allowed redirections), the same lines with hostile
 * fragments mixed in (comments, `$'…'`, backslashes, globs, substitutions, `&`, file redirections, line breaks, braces,
 * parentheses, assignments, `!`, `;;`, reserved words, code-running builtins, characters outside ASCII …), and the
 * programs the lines name: stub names that the differential test installs as copies of /bin/true.
 */
import fc from 'fast-check';

/** Programs the generated lines run (the differential test makes each a stub). */
export const STUB_PROGRAMS = [
  'ls', 'id', 'git', 'touch', 'rm', 'cat', 'echo', 'grep', 'wc', 'find', 'awk', 'sed', 'head', 'printf', 'sudo',
  'env', 'xargs', 'sh', 'timeout', 'npm', 'python3', 'tar', 'make',
] as const;

/** Word pieces inside the subset. */
const plainArg = fc.constantFrom(
  '-la', 'src', 'a.txt', 'HEAD~1', 'x=y', '--opt=v', '/dev/null', '-c', 'alias.x=y', '.', '..', '-', '--', '%1',
  'user@host', 'a,b', 'a:b', '+x', '1', '2', 'id', 'ls',
);
const singleQuoted = fc
  .array(fc.constantFrom('a', ' ', ';', '#', '$', '|', '&', '"', '\\', '!', '`', '(', ')', '*', '>', 'id', 'é', '\t'), { maxLength: 6 })
  .map((parts) => `'${parts.join('')}'`);
const doubleQuoted = fc
  .array(fc.constantFrom('a', ' ', ';', '#', "'", '|', '&', '(', '*', '>', '<', 'id', '~', '中'), { maxLength: 6 })
  .map((parts) => `"${parts.join('')}"`);
const argPiece = fc.oneof({ weight: 4, arbitrary: plainArg }, { weight: 2, arbitrary: singleQuoted }, { weight: 2, arbitrary: doubleQuoted });
const argWord = fc.array(argPiece, { minLength: 1, maxLength: 2 }).map((pieces) => pieces.join(''));
/** a program word: usually bare, sometimes quoted in part (`l's'`, `"id"`) */
const programWord = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STUB_PROGRAMS) },
  { weight: 1, arbitrary: fc.constantFrom("l's'", '"id"', "'git'", 'i""d') },
);
const allowedRedirect = fc.constantFrom('2>&1', '>&2', '1>&2', '>/dev/null', '2>/dev/null', '>> /dev/null', '> /dev/null');
const separator = fc.constantFrom(';', '&&', '||', '|', ' ; ', ' && ', ' || ', ' | ', ';\t');

/** Fragments outside the subset wherever they stand as a word of their own. */
export const HOSTILE_FRAGMENTS = [
  '#', '#x', ';#', "$'\\x3b'", "$'id'", '$x', '${IFS}', '$IFS', '$(id)', '"$(id)"', '`id`', '\\;', '\\', '*', '?',
  '[a]', 'a*', '{', '}', '{id,}', '(', ')', '(id)', 'id()', '&', '\n', '\r', '\n id', '<<EOF', '<<<x', '<&0', '|&',
  ';;', '!', '~', '~/x', 'é', '\u202e', '\u200b', '\u0001', '"a\\b"', '"!"', '"$x"', '>|x', '<>x', '&>x', '>&-',
  '>&3', '3>x', '9>&1', 'x>y',
] as const;

/** Words outside the subset as the first word of a command: reserved words and builtins that run shell code. */
export const HOSTILE_COMMAND_WORDS = [
  'if', 'then', 'fi', 'for', 'do', 'done', 'while', 'until', 'case', 'esac', 'in', 'time', 'eval', 'exec', '.',
  'command', 'trap', 'alias', 'fc', 'source',
] as const;

/** Words inside the reader's subset that the strict analysis refuses as a command's first word. */
export const STRICT_HOSTILE_PROGRAMS = [
  'PATH=/tmp', 'LD_PRELOAD=/x.so', 'GIT_SSH_COMMAND=id', 'A=1', './x', 'bin/x', 'env', 'xargs', 'sudo', 'sh',
  'bash', 'timeout', 'nohup', 'export', 'cd', 'read', 'set', 'unset', 'hash', 'getopts', '/usr/bin/env', '/bin/sh',
] as const;

/** Redirections that the reader accepts and the strict analysis refuses. */
export const STRICT_HOSTILE_REDIRECTS = ['> out.txt', '>>out.txt', '2>err.txt', '< in.txt', '>/dev/null2'] as const;

export interface GeneratedCommand {
  /** the command's words and redirections as written */
  words: string[];
  /** which of `words` is the program */
  programIndex: number;
  /** the program after quote removal */
  program: string;
}

export interface GeneratedLine {
  commands: GeneratedCommand[];
  separators: string[];
  lead: string;
  end: string;
  blank: string;
}

const command: fc.Arbitrary<GeneratedCommand> = fc
  .tuple(fc.option(allowedRedirect, { freq: 8 }), programWord, fc.array(argWord, { maxLength: 3 }), fc.option(allowedRedirect, { freq: 4 }))
  .map(([before, program, args, after]) => ({
    words: [...(before === null ? [] : [before]), program, ...args, ...(after === null ? [] : [after])],
    programIndex: before === null ? 0 : 1,
    program: program.replace(/["']/g, ''),
  }));

/** Lines inside the subset, as the parts they are built from (see `lineText`). */
export const subsetParts: fc.Arbitrary<GeneratedLine> = fc
  .tuple(
    fc.array(fc.tuple(command, separator), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('', ' ', ';', ' ;'),
    fc.constantFrom('', ' ', '\t'),
    fc.constantFrom(' ', '\t', '  '),
  )
  .map(([parts, end, lead, blank]) => ({
    commands: parts.map(([c]) => c),
    separators: parts.slice(0, -1).map(([, sep]) => sep),
    lead,
    end,
    blank,
  }));

/** The line of some parts, with each command's text (in order). */
export function lineText(parts: GeneratedLine): { line: string; commandTexts: string[] } {
  let line = parts.lead;
  const commandTexts: string[] = [];
  parts.commands.forEach((c, index) => {
    const text = c.words.join(parts.blank);
    commandTexts.push(text);
    line += text;
    if (index < parts.separators.length) line += parts.separators[index];
  });
  return { line: line + parts.end, commandTexts };
}

export const subsetLine: fc.Arbitrary<string> = subsetParts.map((parts) => lineText(parts).line);

/** Inserts `word` as a word of its own into one command (`at` picks which command and where; `first`: before all). */
function withWord(parts: GeneratedLine, word: string, at: number, first: boolean): string {
  const index = at % parts.commands.length;
  const target = parts.commands[index] as GeneratedCommand;
  const position = first ? 0 : at % (target.words.length + 1);
  const words = [...target.words.slice(0, position), word, ...target.words.slice(position)];
  const commands = parts.commands.map((c, i) => (i === index ? { ...c, words } : c));
  return lineText({ ...parts, commands }).line;
}

/** A subset line with one fragment outside the subset as a word of its own (first word for command words). */
export const hostileLine: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(subsetParts, fc.constantFrom(...HOSTILE_FRAGMENTS), fc.nat()).map(([parts, word, at]) => withWord(parts, word, at, false)),
  fc.tuple(subsetParts, fc.constantFrom(...HOSTILE_COMMAND_WORDS), fc.nat()).map(([parts, word, at]) => withWord(parts, word, at, true)),
);

/** A subset line with a word the strict analysis refuses: a prefix or launcher first, or a file redirection. */
export const strictHostileLine: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(subsetParts, fc.constantFrom(...STRICT_HOSTILE_PROGRAMS), fc.nat()).map(([parts, word, at]) => {
    // before the program (after a leading redirection, which is not a word)
    const index = at % parts.commands.length;
    const target = parts.commands[index] as GeneratedCommand;
    const words = [...target.words.slice(0, target.programIndex), word, ...target.words.slice(target.programIndex)];
    return lineText({ ...parts, commands: parts.commands.map((c, i) => (i === index ? { ...c, words } : c)) }).line;
  }),
  fc.tuple(subsetParts, fc.constantFrom(...STRICT_HOSTILE_REDIRECTS), fc.nat()).map(([parts, word, at]) => withWord(parts, word, at, false)),
);

/**
 * Lines for the differential test: subset lines, hostile lines, and lines with fragments glued in at any character,
 * so that both accepted and refused lines are frequent.
 */
export const mixedLine: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: subsetLine },
  { weight: 1, arbitrary: hostileLine },
  { weight: 1, arbitrary: strictHostileLine },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        subsetLine,
        fc.constantFrom(
          ...HOSTILE_FRAGMENTS,
          ...HOSTILE_COMMAND_WORDS,
          ...STRICT_HOSTILE_REDIRECTS,
          ...STRICT_HOSTILE_PROGRAMS,
          "'",
          '"',
          ' ; ',
          '&&',
        ),
        fc.nat(),
        fc.constantFrom('', ' '),
      )
      .map(([line, fragment, at, glue]) => {
        const index = at % (line.length + 1);
        return `${line.slice(0, index)}${glue}${fragment}${glue}${line.slice(index)}`;
      }),
  },
);
