import {
  alwaysExecScope,
  analyzeCommand,
  commandCovered,
  commandSegments,
  patternWidth,
  ruleInactiveReason,
  ruleMatchers,
  type CommandMatcher,
} from './command-analysis';
import { RULE_PROGRAMS } from './exec-programs';

const program = (name: string): CommandMatcher => ({ kind: 'program', program: name });
const exact = (...words: string[]): CommandMatcher => ({ kind: 'prefix', words, exact: true });
const prefix = (...words: string[]): CommandMatcher => ({ kind: 'prefix', words, exact: false });

/** Every rule and pattern a hostile line might try to ride on. */
const RIDDEN: CommandMatcher[] = [
  program('ls'),
  prefix('ls'),
  exact('git', 'status'),
  exact('ls', '-la'),
  ...['git', 'find', 'awk', 'sed', 'tar', 'make', 'ssh', 'rg', 'sort', 'python3', 'node', 'xargs', 'env', 'timeout'].map(
    (name) => program(name),
  ),
];

/** Each reproduced way to run more than a rule for `ls` or `git` (or the code-running program itself) allows. */
const HOSTILE_LINES: ReadonlyArray<[string, string]> = [
  ['comment hides the rest from the analyser', 'ls #; id'],
  ['# inside a word', 'ls a#b; id'],
  ['comment and line break', 'ls #x\nid'],
  ['$\'…\' quoting', "ls $'\\x3b' id"],
  ['$\'…\' separator', "ls $'\\n'id"],
  ['backslash-escaped separator', 'ls\\;id'],
  ['plain separator', 'ls ; id'],
  ['line break', 'ls\nid'],
  ['carriage return', 'ls\rid'],
  ['PATH prefix', 'PATH=. ls'],
  ['LD_PRELOAD prefix', 'LD_PRELOAD=/tmp/x.so ls'],
  ['GIT_SSH_COMMAND prefix', "GIT_SSH_COMMAND='id' git status"],
  ['quoted assignment name', "'PATH'=. ls"],
  ['git alias runs a shell command', "git -c alias.x='!id > f' x"],
  ['git alias after a covered command', "git status; git -c alias.x='!id' x"],
  ['git core.pager', "git -c core.pager='id' log"],
  ['find -exec', "find . -exec id ';'"],
  ['find -exec with braces', 'find . -exec id {} +'],
  ['awk system()', "awk 'BEGIN{system(\"id\")}'"],
  ['sed e', "sed -n '1e id' a.txt"],
  ['tar --to-command', 'tar -xf a.tar --to-command=id'],
  ['tar checkpoint action', 'tar -cf /dev/null a --checkpoint=1 --checkpoint-action=exec=id'],
  ['rg --pre', 'rg --pre id x'],
  ['sort --compress-program', 'sort --compress-program=id a.txt'],
  ['make', 'make -f /dev/null x'],
  ['ssh ProxyCommand', 'ssh -o ProxyCommand=id host'],
  ['python -c', "python3 -c 'import os'"],
  ['node -e', "node -e 'x'"],
  ['env wrapper', 'env id'],
  ['env wrapper of ls', 'env ls'],
  ['xargs wrapper', 'xargs id'],
  ['timeout wrapper', 'timeout 1 id'],
  ['nohup wrapper', 'nohup ls'],
  ['sudo', 'sudo ls'],
  ['absolute launcher', '/usr/bin/env ls'],
  ['right-to-left override outside quotes', 'ls \u202e; id'],
  ['no-break spaces', 'ls\u00a0;\u00a0id'],
  ['fullwidth semicolon', 'ls \uff1b id'],
  ['line separator', 'ls\u2028id'],
  ['zero-width space in the program', 'l\u200bs; id'],
  ['${IFS}', 'ls${IFS}id'],
  ['$IFS', 'ls$IFS;id'],
  ['quoted program then another', "l's' ; id"],
  ['redirection to a file after a copy', 'ls 2>&1>/tmp/x'],
  ['/dev/null then another command', 'ls >/dev/null;id'],
  ['&> is & in dash', 'ls &>/dev/null; id'],
  ['background', 'ls & id'],
  ['pipe', 'ls | id'],
  ['or', 'ls || id'],
  ['file redirection', 'ls > ~/.bashrc'],
  ['file redirection 2', 'ls >/tmp/x'],
  ['not quite /dev/null', 'ls -la >/dev/null2'],
  ['input redirection', 'ls < /etc/shadow'],
  ['descriptor 3', 'ls 2>&3'],
  ['closing a descriptor', 'ls >&-'],
  ['here-document', 'ls <<EOF'],
  ['process substitution', 'ls <(id)'],
  ['command substitution', 'ls $(id)'],
  ['backquotes', 'ls `id`'],
  ['substitution in double quotes', 'ls "$(id)"'],
  ['braces', '{ ls; id; }'],
  ['subshell', '(ls; id)'],
  ['subshell after &&', 'ls && (id)'],
  ['if', 'if ls; then id; fi'],
  ['negation', '! ls'],
  ['eval', 'eval ls'],
  ['exec', 'exec ls'],
  ['command builtin', 'command ls'],
  ['dot', '. ./x'],
  ['trap', 'trap id EXIT; ls'],
  ['alias', 'alias ls=id; ls'],
  ['export PATH', 'export PATH=/tmp; ls'],
  ['read PATH', 'read PATH; ls'],
  ['getopts into PATH', 'getopts x PATH; ls'],
  ['hash', 'hash -p /tmp/x ls; ls'],
  ['cd', 'cd /tmp && ls'],
  ['glob', 'ls *'],
  ['glob ?', 'ls ?'],
  ['glob []', 'ls [a]'],
  ['leading tilde', 'ls ~'],
  [';;', 'ls;;id'],
  ['|&', 'ls |& id'],
  ['relative program', './ls'],
  ['relative program in a directory', 'bin/ls'],
  ['ls by path', '/tmp/ls'],
  ['function definition', 'ls() { id; }; ls'],
  ['unterminated quote', "ls 'a"],
  ['! inside double quotes', 'ls "!x"'],
  ['backslash inside double quotes', 'ls "a\\"; id; "'],
];

describe('exec command analysis', () => {
  it.each(HOSTILE_LINES)('Scenario: hostile lines are never covered by a rule for ls or git (%s)', (_name, line) => {
    expect(commandCovered(line, RIDDEN)).toBe(false);
    expect(alwaysExecScope(line) === null || alwaysExecScope(line)?.kind === 'exec_command').toBe(true);
  });

  it('Scenario: a program rule covers a line only when it covers every command in it', () => {
    // the rules above do cover ordinary lines: the table is not vacuous
    expect(commandCovered('ls -la', RIDDEN)).toBe(true);
    expect(commandCovered('git status', RIDDEN)).toBe(true);
    expect(commandCovered("'ls' src 2>&1 >/dev/null && ls -la; ls 'a b' | ls", RIDDEN)).toBe(true);
    expect(commandCovered('ls && echo x', [program('ls')])).toBe(false);
    expect(commandCovered('ls && echo x', [program('ls'), program('echo')])).toBe(true);
    expect(commandCovered('git status && rm -rf /', [exact('git', 'status')])).toBe(false);
    expect(commandCovered('git status -s', [exact('git', 'status')])).toBe(false);
    expect(commandCovered('sudo ls', [program('sudo')])).toBe(false);
    expect(commandCovered('ls', [])).toBe(false);
  });

  it('Scenario: a line outside the shell subset is unanalysable and always asked', () => {
    expect(analyzeCommand('ls #x')).toEqual({ ok: false, reason: 'comment (#)' });
    expect(analyzeCommand("ls $'x'")).toEqual({ ok: false, reason: 'expansion ($)' });
    expect(analyzeCommand('ls\\ x')).toEqual({ ok: false, reason: 'backslash' });
    expect(analyzeCommand('PATH=. ls')).toEqual({ ok: false, reason: 'a NAME=value assignment before the program' });
    expect(analyzeCommand('env ls')).toEqual({ ok: false, reason: 'env runs other commands or changes how the line runs' });
    expect(analyzeCommand('./x')).toEqual({ ok: false, reason: 'a program given by a relative path' });
    expect(analyzeCommand('ls > out.txt')).toEqual({ ok: false, reason: 'a redirection other than to /dev/null or a descriptor copy' });
    expect(analyzeCommand('   ')).toEqual({ ok: false, reason: 'no command' });
    expect(analyzeCommand('ls\nid')).toEqual({ ok: false, reason: 'line break' });
    expect(analyzeCommand('x'.repeat(16_385))).toEqual({ ok: false, reason: 'command too long' });
    // the card still gets the commands of a line that has a file redirection or a launcher
    const line = `echo "password='" ; id > HIDDEN_RAN.txt ; sudo ls`;
    expect(commandSegments(line)).toEqual({
      ok: true,
      commands: [
        { program: 'echo', start: 0, end: 17 },
        { program: 'id', start: 20, end: 39 },
        { program: 'sudo', start: 42, end: 49 },
      ],
    });
    expect(commandSegments('eval "id"')).toEqual({ ok: false, reason: 'eval runs its arguments as shell code' });
    expect(commandSegments('ls #')).toEqual({ ok: false, reason: 'comment (#)' });
  });

  it("keeps each command's words unquoted and its span", () => {
    expect(analyzeCommand(`git commit -m "a b" && ls 'x y'`)).toEqual({
      ok: true,
      commands: [
        { program: 'git', words: ['git', 'commit', '-m', 'a b'], span: { start: 0, end: 19 } },
        { program: 'ls', words: ['ls', 'x y'], span: { start: 23, end: 31 } },
      ],
    });
  });

  it('Scenario: only programs that run no other code get a program-wide rule; other programs get an exact rule', () => {
    expect(alwaysExecScope('ls -la')).toEqual({ kind: 'exec_program', program: 'ls' });
    expect(alwaysExecScope('ls -la && ls src 2>&1')).toEqual({ kind: 'exec_program', program: 'ls' });
    expect(alwaysExecScope('git status')).toEqual({ kind: 'exec_command', argv: ['git', 'status'] });
    expect(alwaysExecScope(`git commit -m 'a b'`)).toEqual({ kind: 'exec_command', argv: ['git', 'commit', '-m', 'a b'] });
    expect(alwaysExecScope('npm test >/dev/null')).toEqual({ kind: 'exec_command', argv: ['npm', 'test'] });
    // several commands of programs outside the allowlist, paths, launchers, unanalysable lines: once only
    expect(alwaysExecScope('git add . && git commit -m x')).toBeNull();
    expect(alwaysExecScope('ls && git status')).toBeNull();
    expect(alwaysExecScope('/usr/bin/git status')).toBeNull();
    expect(alwaysExecScope('/bin/ls')).toBeNull();
    expect(alwaysExecScope('sudo git push')).toBeNull();
    expect(alwaysExecScope('git log > out.txt')).toBeNull();
    // the allowlist holds none of the programs that run code through their options
    for (const name of ['git', 'find', 'awk', 'sed', 'tar', 'make', 'ssh', 'xargs', 'env', 'python3', 'sort', 'rg', 'date', 'tree', 'diff', 'file', 'uniq']) {
      expect(RULE_PROGRAMS.has(name)).toBe(false);
    }
  });

  it('Scenario: a stored program rule for a program outside the allowlist covers nothing and says why', () => {
    expect(commandCovered('git status', ruleMatchers([{ kind: 'exec_program', program: 'git' }]))).toBe(false);
    expect(commandCovered('/usr/bin/ls', ruleMatchers([{ kind: 'exec_program', program: '/usr/bin/ls' }]))).toBe(false);
    expect(commandCovered('git status', ruleMatchers([{ kind: 'exec_command', argv: ['git', 'status'] }]))).toBe(true);
    expect(ruleInactiveReason({ kind: 'exec_program', program: 'git' })).toMatch(/^git can run other programs or code/);
    expect(ruleInactiveReason({ kind: 'exec_program', program: '/usr/bin/ls' })).toMatch(/path/);
    expect(ruleInactiveReason({ kind: 'exec_command', argv: ['sudo', 'ls'] })).toMatch(/^sudo/);
    expect(ruleInactiveReason({ kind: 'exec_program', program: 'ls' })).toBeNull();
    expect(ruleInactiveReason({ kind: 'exec_command', argv: ['git', 'status'] })).toBeNull();
    expect(ruleInactiveReason({ kind: 'tool', tool: 'write_file' })).toBeNull();
  });

  it('Scenario: a prefix pattern of a program that runs other code is reported as any command', () => {
    expect(patternWidth(prefix('git'))).toBe('any-code');
    expect(patternWidth(prefix('git', 'status'))).toBe('any-code');
    expect(patternWidth(prefix('ls'))).toBe('prefix');
    expect(patternWidth(exact('npm', 'test'))).toBe('exact');
    expect(patternWidth(program('grep'))).toBe('prefix');
    expect(patternWidth(program('find'))).toBe('any-code');
  });
});
