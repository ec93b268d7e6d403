import { alwaysProgram, analyzeCommand, commandCovered, type CommandMatcher } from './command-analysis';

const git: CommandMatcher = { kind: 'program', program: 'git' };
const ls: CommandMatcher = { kind: 'program', program: 'ls' };

describe('exec command analysis', () => {
  it('Scenario: the standing-rule scope of a command is its program, when there is exactly one safe program', () => {
    expect(alwaysProgram('git status')).toBe('git');
    expect(alwaysProgram('git add . && git commit -m "x; rm -rf /"')).toBe('git');
    expect(alwaysProgram('FOO=1 env X=2 git log')).toBe('git');
    expect(alwaysProgram('/usr/bin/git status')).toBe('/usr/bin/git');
    expect(alwaysProgram('git status 2>&1 > /dev/null')).toBe('git');
    // several programs, launchers, relative paths, unparsable lines: no scope
    expect(alwaysProgram('git status && rm -rf /')).toBeNull();
    expect(alwaysProgram('sudo git push')).toBeNull();
    expect(alwaysProgram('env -i git log')).toBeNull();
    expect(alwaysProgram('sh -c "git status"')).toBeNull();
    expect(alwaysProgram('./script.sh')).toBeNull();
    expect(alwaysProgram('bin/tool')).toBeNull();
    expect(alwaysProgram('git log > out.txt')).toBeNull();
    expect(alwaysProgram('$CMD status')).toBeNull();
  });

  it('Scenario: a program rule covers a line only when it covers every command in it', () => {
    expect(commandCovered('git status', [git])).toBe(true);
    expect(commandCovered('git status | ls', [git])).toBe(false);
    expect(commandCovered('git status | ls', [git, ls])).toBe(true);
    expect(commandCovered('git status && rm -rf /', [git])).toBe(false);
    expect(commandCovered('git status; rm -rf /', [git])).toBe(false);
    expect(commandCovered('git status & rm -rf /', [git])).toBe(false);
    expect(commandCovered('(cd x; git status)', [git])).toBe(false);
    expect(commandCovered('git status # && rm -rf /', [git])).toBe(true);
    // what the parser cannot see through is never covered
    expect(commandCovered('git status\nrm -rf /', [git])).toBe(false);
    expect(commandCovered('git log $(rm -rf /)', [git])).toBe(false);
    expect(commandCovered('git log "$(rm -rf /)"', [git])).toBe(false);
    expect(commandCovered('git log `rm -rf /`', [git])).toBe(false);
    expect(commandCovered('git diff <(rm -rf /)', [git])).toBe(false);
    expect(commandCovered('git log > ~/.bashrc', [git])).toBe(false);
    expect(commandCovered('git apply <<EOF', [git])).toBe(false);
    expect(commandCovered('sudo git status', [git])).toBe(false);
    expect(commandCovered('/usr/bin/git status', [git])).toBe(false);
    expect(commandCovered('if git status; then rm x; fi', [git])).toBe(false);
    expect(commandCovered('git status', [{ kind: 'program', program: 'sudo' }])).toBe(false);
    expect(commandCovered('sudo git status', [{ kind: 'program', program: 'sudo' }])).toBe(false);
  });

  it('Scenario: word prefixes (Skills Bash(git status:*)) and exact commands', () => {
    const status: CommandMatcher = { kind: 'prefix', words: ['git', 'status'], exact: false };
    const npmTest: CommandMatcher = { kind: 'prefix', words: ['npm', 'test'], exact: true };
    expect(commandCovered('git status --short', [status])).toBe(true);
    expect(commandCovered('git push', [status])).toBe(false);
    expect(commandCovered('npm test', [npmTest])).toBe(true);
    expect(commandCovered('npm test -- --watch', [npmTest])).toBe(false);
    expect(commandCovered('sudo git status', [{ kind: 'prefix', words: ['sudo'], exact: false }])).toBe(false);
  });

  it('Scenario: simple commands keep their words unquoted', () => {
    expect(analyzeCommand('A=1 git commit -m "a b" && ls *.txt')).toEqual({
      ok: true,
      commands: [
        { program: 'git', words: ['git', 'commit', '-m', 'a b'] },
        { program: 'ls', words: ['ls', '*.txt'] },
      ],
    });
    expect(analyzeCommand('   ')).toEqual({ ok: false, reason: 'no command' });
  });
});
