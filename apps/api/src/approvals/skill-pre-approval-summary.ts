/**
 * What a Skill's `allowed-tools` would pre-approve, in words the owner can judge before granting it. Each entry is
 * read by the same parser that builds the pre-approvals (`addAllowedTools` in skill-pre-approvals.ts), so the summary
 * never says less than what the grant allows.
 */
import type { SkillPreApprovalItem } from '@cashcode/contracts';
import { patternWidth } from './command-analysis';
import { addAllowedTools, emptyPreApprovals } from './skill-pre-approvals';

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
    // the command analyser's judgement: a prefix of a program outside the program-wide allowlist can run other code
    const broad = patternWidth(matcher) === 'any-code';
    const text = broad
      ? `commands starting with \`${value}\` (this program can run other code through its arguments: effectively any shell command)`
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
