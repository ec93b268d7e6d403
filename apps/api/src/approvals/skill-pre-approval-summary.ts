/**
 * What a Skill's `allowed-tools` would pre-approve, in words the owner can judge before granting it. Each entry is
 * read by the same parser that builds the pre-approvals (`addAllowedTools` in skill-pre-approvals.ts), so the summary
 * never says less than what the grant allows.
 */
import type { SkillPreApprovalItem } from '@cashcode/contracts';
import { addAllowedTools, emptyPreApprovals } from './skill-pre-approvals';

/**
 * Programs that run other code given through their own arguments or options (shells, interpreters, launchers, and
 * ordinary programs with an option that runs a command: `git -c alias.x=!…`, `find -exec`, `awk 'BEGIN{system(…)}'`,
 * `sed e`, `tar --to-command`, `make`, `ssh`, package runners). A pre-approval of such a program with any arguments
 * is worded as "any command".
 *
 * The command analyser (`command-analysis.ts`) is the place that should own this list; when it exports its own
 * judgement of a `Bash(<program>:*)` prefix, `prefixRunsAnyCode` should call it instead.
 */
const CODE_RUNNING_PROGRAMS: ReadonlySet<string> = new Set([
  'sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'busybox',
  'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'tclsh', 'Rscript',
  'osascript', 'pwsh', 'powershell',
  'env', 'xargs', 'sudo', 'doas', 'su', 'nohup', 'timeout', 'nice', 'ionice', 'stdbuf', 'time', 'watch', 'chroot',
  'setsid', 'flock', 'script', 'exec', 'eval', 'command', 'builtin', 'source', '.',
  'git', 'find', 'awk', 'gawk', 'mawk', 'nawk', 'sed', 'gsed', 'tar', 'make', 'gmake', 'ssh', 'scp', 'rsync', 'vim', 'vi',
  'nvim', 'emacs', 'less', 'man', 'npm', 'npx', 'pnpm', 'yarn', 'pip', 'pip3', 'uv', 'uvx', 'pipx', 'cargo', 'go',
  'docker', 'podman', 'kubectl', 'gdb', 'parallel',
]);

/**
 * Whether a `Bash(<words>:*)` prefix lets the model run any code: the prefix is only a program that runs other code
 * (`Bash(git:*)`, `Bash(python3:*)`), or a shell, interpreter or launcher given further words (`Bash(sh -c:*)`).
 */
export function prefixRunsAnyCode(words: readonly string[]): boolean {
  const program = words[0];
  if (program === undefined) return true;
  const base = program.slice(program.lastIndexOf('/') + 1);
  if (!CODE_RUNNING_PROGRAMS.has(base)) return false;
  if (words.length === 1) return true;
  // a shell or launcher with an option next (`sh -c`, `env -i`, `python3 -e`) still runs what follows
  return (words[1] ?? '').startsWith('-');
}

/** One entry, described. */
export function describeAllowedTool(entry: string): SkillPreApprovalItem {
  const pre = addAllowedTools(emptyPreApprovals(), [entry]);
  if (pre.anyExec) return { entry, kind: 'any_command', value: '', broad: true, text: 'any shell command' };
  const matcher = pre.exec[0];
  if (matcher !== undefined && matcher.kind === 'prefix') {
    const value = matcher.words.join(' ');
    if (matcher.exact) {
      return { entry, kind: 'exact_command', value, broad: false, text: `exactly the command \`${value}\`` };
    }
    const broad = prefixRunsAnyCode(matcher.words);
    const text = broad
      ? `commands starting with \`${value}\` (this program can run any other command: effectively any shell command)`
      : `commands starting with \`${value}\``;
    return { entry, kind: 'command_prefix', value, broad, text };
  }
  const tool = [...pre.tools][0];
  if (tool !== undefined) return { entry, kind: 'tool', value: tool, broad: false, text: `tool ${tool}` };
  const mcp = [...pre.mcp][0];
  if (mcp !== undefined) {
    const slash = mcp.indexOf('/');
    const server = mcp.slice(0, slash);
    const name = mcp.slice(slash + 1);
    return name === '*'
      ? { entry, kind: 'mcp_server', value: server, server, broad: false, text: `every tool of MCP server ${server}` }
      : { entry, kind: 'mcp_tool', value: name, server, broad: false, text: `tool ${name} of MCP server ${server}` };
  }
  return { entry, kind: 'ignored', value: '', broad: false, text: 'nothing (this entry is not pre-approved)' };
}

/** Every entry of a Skill's `allowed-tools`, described in order. */
export function describeAllowedTools(entries: readonly string[]): SkillPreApprovalItem[] {
  return entries.map(describeAllowedTool);
}
