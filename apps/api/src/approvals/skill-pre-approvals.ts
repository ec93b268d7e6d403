/**
 * Skills' `allowed-tools` (Agent Skills / Claude Code meaning): while a Skill is loaded in a turn, the tools it lists
 * are pre-approved, i.e. they run without asking in that turn. It never restricts the other tools, and a `deny`
 * policy still wins.
 *
 * - `Bash` / `Bash(*)` → any `exec` command; `Bash(git:*)` → commands whose words start with `git`;
 *   `Bash(git status:*)` → that prefix; `Bash(npm test)` → exactly that command. Compound lines are pre-approved only
 *   when every command in them is (see command-analysis.ts). The pattern's words are read with the same reader as the
 *   command line; a pattern outside its subset (`Bash(FOO=1 git:*)`, `Bash(sudo:*)`) pre-approves nothing. A prefix
 *   of a program that can run other code through its options is effectively any command (`patternWidth`), which the
 *   owner is told before approving a Skill's pre-approvals.
 * - `Read` → read_file, `Write` → write_file, `Edit`/`MultiEdit` → edit_file, `Grep` → grep, `Glob` → glob,
 *   `LS` → list_dir, `WebFetch` → web_fetch, `WebSearch` → web_search; `mcp__<server>__<tool>` → that MCP tool and
 *   `mcp__<server>` → every tool of that server; other names are taken as they are (`web_fetch`, `mcp_x_y`).
 * - A non-Bash entry with an argument (`Read(./src/**)`, `WebFetch(domain:x)`) is not pre-approved: its narrowing
 *   is not enforced here, and pre-approving the whole tool would be wider than the Skill asked for.
 */
import type { AgentTool } from '../agent/agent-tool';
import { analyzeCommand, type CommandMatcher } from './command-analysis';

export const ALLOWED_TOOL_ALIASES: Readonly<Record<string, string>> = {
  bash: 'exec',
  shell: 'exec',
  read: 'read_file',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'edit_file',
  ls: 'list_dir',
  glob: 'glob',
  grep: 'grep',
  webfetch: 'web_fetch',
  websearch: 'web_search',
};

export interface PreApprovals {
  /** tool names (built-in or wrapper names) pre-approved whole */
  tools: Set<string>;
  /** MCP: `server/tool` keys, and `server/*` for a whole server */
  mcp: Set<string>;
  /** every exec command */
  anyExec: boolean;
  exec: CommandMatcher[];
}

export function emptyPreApprovals(): PreApprovals {
  return { tools: new Set(), mcp: new Set(), anyExec: false, exec: [] };
}

/** The words of a pattern, read like a command line (so both sides read quotes identically): one simple command. */
function words(spec: string): string[] | null {
  const analysis = analyzeCommand(spec);
  if (!analysis.ok || analysis.commands.length !== 1) return null;
  return (analysis.commands[0] as { words: string[] }).words;
}

function execMatcher(spec: string): CommandMatcher | 'any' | null {
  const text = spec.trim();
  if (text === '' || text === '*' || text === ':*') return 'any';
  let exact = true;
  let body = text;
  if (body.endsWith(':*')) {
    exact = false;
    body = body.slice(0, -2);
  } else if (body.endsWith(' *')) {
    exact = false;
    body = body.slice(0, -2);
  }
  const prefix = words(body.trim());
  if (prefix === null || prefix.length === 0) return null;
  return { kind: 'prefix', words: prefix, exact };
}

/** Adds one Skill's `allowed-tools` entries to the turn's pre-approvals. */
export function addAllowedTools(into: PreApprovals, entries: readonly string[]): PreApprovals {
  for (const raw of entries) {
    const entry = raw.trim();
    // `Name` or `Name(argument)`; split by hand rather than with a regex (linear on any input)
    const open = entry.indexOf('(');
    if (open !== -1 && !entry.endsWith(')')) continue;
    const base = (open === -1 ? entry : entry.slice(0, open)).trim();
    if (base === '' || base.includes(')')) continue;
    const argument = open === -1 ? undefined : entry.slice(open + 1, -1);
    const mapped = ALLOWED_TOOL_ALIASES[base.toLowerCase()] ?? base;
    if (mapped === 'exec') {
      const matcher = argument === undefined ? 'any' : execMatcher(argument);
      if (matcher === 'any') into.anyExec = true;
      else if (matcher !== null) into.exec.push(matcher);
      continue;
    }
    if (argument !== undefined) continue;
    if (mapped.startsWith('mcp__')) {
      const [server, ...rest] = mapped.slice('mcp__'.length).split('__');
      if (!server) continue;
      into.mcp.add(rest.length === 0 ? `${server}/*` : `${server}/${rest.join('__')}`);
      continue;
    }
    if (mapped !== '') into.tools.add(mapped);
  }
  return into;
}

/** Whether a non-exec tool is pre-approved. */
export function toolPreApproved(pre: PreApprovals, tool: AgentTool): boolean {
  if (pre.tools.has(tool.name)) return true;
  if (tool.mcp) return pre.mcp.has(`${tool.mcp.server}/${tool.mcp.tool}`) || pre.mcp.has(`${tool.mcp.server}/*`);
  return false;
}
