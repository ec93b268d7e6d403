import type { AgentTool } from '../agent/agent-tool';
import { automationAllowlist, unknownNames } from './automation-tools';

const tool = (name: string, server?: string): AgentTool =>
  ({ name, description: '', parameters: { type: 'object', properties: {} }, readOnly: true, execute: () => Promise.resolve(''), ...(server ? { mcp: { server, tool: name } } : {}) }) as unknown as AgentTool;

describe('automation tool subsets', () => {
  it('null everywhere is no allowlist', () => {
    expect(automationAllowlist({ tools: null, mcp_servers: null, skills: null })).toBeNull();
  });

  it('Scenario: a run may use only the listed tools, servers and Skills', () => {
    const allow = automationAllowlist({ tools: ['list_dir'], mcp_servers: ['files'], skills: ['pdf'] });
    expect(allow?.allows(tool('list_dir'))).toBe(true);
    expect(allow?.allows(tool('exec'))).toBe(false);
    expect(allow?.allows(tool('mcp_files_read', 'files'))).toBe(true);
    expect(allow?.allows(tool('mcp_web_get', 'web'))).toBe(false);
    expect(allow?.allows(tool('mcp_prepare'), { server_name: 'web' })).toBe(false);
    expect(allow?.allows(tool('mcp_prepare'), { server_name: 'files' })).toBe(true);
    expect(allow?.allows(tool('skill_load'), { name: 'pdf' })).toBe(true);
    expect(allow?.allows(tool('skill_load'), { name: 'other' })).toBe(false);
    const none = automationAllowlist({ tools: null, mcp_servers: [], skills: [] });
    expect([none?.allows(tool('exec')), none?.allows(tool('mcp_prepare')), none?.allows(tool('skill_search'))]).toEqual([true, false, false]);
  });

  it("Scenario: a turn's explicit subset offers the deferred tools it names and only those", () => {
    const allow = automationAllowlist({ tools: ['list_dir', 'browser'], mcp_servers: null, skills: null });
    expect([allow?.offers?.('browser'), allow?.offers?.('schedule_task'), allow?.offers?.('list_dir')]).toEqual([true, false, true]);
    expect(allow?.allows(tool('schedule_task'))).toBe(false);
    // all built-in tools (null): nothing is named, a deferred tool is offered once the chat activates it
    const all = automationAllowlist({ tools: null, mcp_servers: [], skills: null });
    expect(all?.offers?.('browser')).toBe(false);
  });

  it('names the tools, servers and Skills that do not exist', async () => {
    const catalog = { toolNames: () => ['list_dir', 'skill_load'], mcpServerNames: () => ['files'], skillExists: (name: string) => Promise.resolve(name === 'pdf') };
    expect(await unknownNames({ tools: ['list_dir', 'skill_load', 'nope'], mcp_servers: ['files', 'web'], skills: ['pdf', 'gone'] }, catalog)).toEqual([
      { field: 'tools', name: 'skill_load' },
      { field: 'tools', name: 'nope' },
      { field: 'mcp_servers', name: 'web' },
      { field: 'skills', name: 'gone' },
    ]);
  });
});
