import type { AgentTool } from '../agent/agent-tool';
import { commandCovered } from './command-analysis';
import { addAllowedTools, emptyPreApprovals, toolPreApproved } from './skill-pre-approvals';

const tool = (name: string, mcp?: AgentTool['mcp']): AgentTool =>
  ({ name, description: '', parameters: { type: 'object', properties: {} }, readOnly: false, mcp, execute: () => Promise.resolve('') }) as AgentTool;

describe('Skills allowed-tools as pre-approvals', () => {
  it('Scenario: Claude-style names map to the built-in tools; entries with a narrowing argument are not pre-approved', () => {
    const pre = addAllowedTools(emptyPreApprovals(), ['Read', 'Write', 'Edit', 'Grep', 'Glob', 'WebFetch', 'web_search', 'Write(src/**)']);
    expect([...pre.tools].sort()).toEqual(['edit_file', 'glob', 'grep', 'read_file', 'web_fetch', 'web_search', 'write_file']);
    const narrowed = addAllowedTools(emptyPreApprovals(), ['WebFetch(domain:example.com)']);
    expect(toolPreApproved(narrowed, tool('web_fetch'))).toBe(false);
    expect(pre.anyExec).toBe(false);
    expect(pre.exec).toEqual([]);
  });

  it('Scenario: Bash patterns pre-approve exec for that program or prefix only; Bash alone for any command', () => {
    const git = addAllowedTools(emptyPreApprovals(), ['Bash(git:*)']);
    expect(git.anyExec).toBe(false);
    expect(commandCovered('git status', git.exec)).toBe(true);
    expect(commandCovered('git status && rm -rf /', git.exec)).toBe(false);
    expect(commandCovered('rm -rf /', git.exec)).toBe(false);
    const status = addAllowedTools(emptyPreApprovals(), ['Bash(git status:*)', 'Bash(npm test)']);
    expect(commandCovered('git status -s', status.exec)).toBe(true);
    expect(commandCovered('git push', status.exec)).toBe(false);
    expect(commandCovered('npm test', status.exec)).toBe(true);
    expect(commandCovered('npm test --x', status.exec)).toBe(false);
    expect(addAllowedTools(emptyPreApprovals(), ['Bash']).anyExec).toBe(true);
    expect(addAllowedTools(emptyPreApprovals(), ['Bash(*)']).anyExec).toBe(true);
  });

  it('Scenario: MCP tools by wrapper name, mcp__server__tool or a whole server', () => {
    const say = tool('mcp_hello_say_hello', { server: 'hello', tool: 'say_hello', readOnly: true, destructive: false });
    const shout = tool('mcp_hello_shout', { server: 'hello', tool: 'shout', readOnly: false, destructive: false });
    expect(toolPreApproved(addAllowedTools(emptyPreApprovals(), ['mcp_hello_shout']), shout)).toBe(true);
    expect(toolPreApproved(addAllowedTools(emptyPreApprovals(), ['mcp__hello__shout']), shout)).toBe(true);
    expect(toolPreApproved(addAllowedTools(emptyPreApprovals(), ['mcp__hello__shout']), say)).toBe(false);
    expect(toolPreApproved(addAllowedTools(emptyPreApprovals(), ['mcp__hello']), say)).toBe(true);
  });
});
