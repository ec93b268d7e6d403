/**
 * What the approvals know about programs an exec line may name (see command-analysis.ts for how a line is read).
 *
 * - RULE_PROGRAMS: the only programs that may get a program-wide standing rule ("always allow `ls`", any arguments).
 *   Each one was checked option by option (its manual page): it runs no other program or code through any option
 *   (no `-exec`, `--pre`, `--compress-program`, `--to-command`, `-e`/`-c` code, pager, hook or config that names a
 *   command), and writes nothing but its standard output and error (no `-o FILE`, no second file operand that is
 *   written, nothing that changes the system). Writing counts because a writer could plant code that a program with an
 *   exact rule later runs (a Git hook, a package.json script). Left out on purpose, among others: `date` (`-s` sets
 *   the clock), `tree` (`-o` writes), `uniq` (writes its second operand), `sort` (`-o`, `--compress-program`), `diff`
 *   (`-l` runs `pr`), `file` (`-C` writes, may run decompressors), `less`/`more`/`man` (run commands), `jq`.
 * - LAUNCHER_PROGRAMS: programs and builtins that run another program, shell code or a file given in their arguments,
 *   and builtins that change how later words of the line are read (variables, `PATH`, descriptors, traps, the working
 *   directory). A line with one of them is never covered by any rule or pattern.
 * - CODE_BUILTINS: shell builtins that run their arguments as shell code inside the same shell (`eval 'id'` starts
 *   `id` although the line names only `eval`): a line with one of them cannot even be split into its commands.
 */

export const RULE_PROGRAMS: ReadonlySet<string> = new Set([
  // listing and reading files
  'ls', 'cat', 'head', 'tail', 'wc', 'stat', 'du', 'df', 'cmp', 'nl', 'tac', 'rev', 'od', 'base64',
  'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum',
  // searching (GNU grep runs nothing; egrep/fgrep/rgrep are `grep -E/-F/-r`)
  'grep', 'egrep', 'fgrep', 'rgrep',
  // text filters writing to standard output only
  'cut', 'tr', 'fold', 'expand', 'unexpand', 'paste', 'comm', 'join', 'column', 'seq',
  // names and paths
  'basename', 'dirname', 'realpath', 'readlink', 'pwd', 'which',
  // the system and the user, read only
  'whoami', 'id', 'groups', 'uname', 'arch', 'nproc', 'printenv',
  // output and status
  'echo', 'printf', 'true', 'false', 'test', 'sleep',
]);

export const LAUNCHER_PROGRAMS: ReadonlySet<string> = new Set([
  // privilege and identity
  'sudo', 'doas', 'su', 'pkexec', 'runuser', 'setpriv', 'capsh', 'sg', 'newgrp', 'login', 'fakeroot', 'fakechroot',
  // shells and shell builtins that run code or files
  'sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'yash', 'posh', 'ash', 'fish', 'csh', 'tcsh', 'rc', 'busybox',
  'toybox', 'eval', 'exec', 'command', 'builtin', 'source', '.', 'trap', 'fc',
  // programs that start the program named in their arguments
  'env', 'xargs', 'parallel', 'nohup', 'nice', 'ionice', 'time', 'timeout', 'stdbuf', 'setsid', 'chroot', 'unshare',
  'nsenter', 'strace', 'ltrace', 'valgrind', 'watch', 'script', 'flock', 'chrt', 'taskset', 'numactl', 'prlimit',
  'setarch', 'linux32', 'linux64', 'firejail', 'bwrap', 'proot', 'systemd-run', 'systemd-nspawn', 'machinectl',
  'run-parts', 'start-stop-daemon', 'daemonize', 'expect', 'unbuffer', 'rlwrap', 'faketime', 'catchsegv',
  'torsocks', 'proxychains', 'proxychains4', 'tsocks', 'sshpass', 'xvfb-run', 'dbus-launch', 'cgexec', 'entr',
  'at', 'batch', 'chpst', 'envdir', 'softlimit', 'setuidgid',
  // builtins that change how the rest of the line is read or where it runs
  'export', 'readonly', 'local', 'unset', 'set', 'read', 'getopts', 'hash', 'alias', 'unalias', 'cd', 'chdir',
  'pushd', 'popd', 'umask', 'ulimit', 'declare', 'typeset', 'let', 'shopt', 'enable', 'mapfile', 'readarray',
]);

export const CODE_BUILTINS: ReadonlySet<string> = new Set([
  'eval', 'exec', 'command', 'builtin', '.', 'source', 'trap', 'fc', 'alias', 'unalias',
]);

/** Reserved words (dash's and bash's): a line that uses them is a compound command, which is not read here. */
export const SHELL_KEYWORDS: ReadonlySet<string> = new Set([
  '!', '{', '}', 'case', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'if', 'in', 'then', 'until', 'while',
  '[[', ']]', 'function', 'select', 'time', 'coproc',
]);

/** A program found through PATH: letters, digits and `._+-`, not starting with a punctuation mark. */
export const BARE_PROGRAM = /^[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}$/;
/** An absolute path of the same characters. */
export const ABSOLUTE_PROGRAM = /^\/[A-Za-z0-9._+\-/]{1,255}$/;

/** The last component of a path (the program itself for a bare name). */
export function programBaseName(program: string): string {
  const slash = program.lastIndexOf('/');
  return slash === -1 ? program : program.slice(slash + 1);
}
