import type { AgentTool } from '../agent/agent-tool';
import type { ApprovalCall } from '../agent/tool-gate';
import { alwaysScope, evaluateCall } from './call-evaluation';
import { DEFAULT_RISK_POLICIES, type ToolPolicyState } from './tool-policy-store';

const tool = (name: string, mcp?: AgentTool['mcp']): AgentTool => ({
  name,
  description: '',
  parameters: { type: 'object', properties: {} },
  readOnly: false,
  ...(mcp ? { mcp } : {}),
  execute: () => Promise.resolve(''),
});
const page = { kind: 'web_fetch' as const, name: 'https://evil.test/' };
const call = (agentTool: AgentTool, untrusted = [page]): ApprovalCall => ({
  chatId: 'c',
  turnId: 't',
  callId: 'x',
  tool: agentTool,
  rawArguments: '{"content":"a fact"}',
  untrustedSources: untrusted,
});
const state = (patch: Partial<ToolPolicyState> = {}): ToolPolicyState => ({
  defaults: { ...DEFAULT_RISK_POLICIES },
  tools: {},
  servers: {},
  rules: [],
  ...patch,
});

describe('memory writes from untrusted context', () => {
  it('save_memory and agent_skill_manage become memory_write and ask; no rule covers them and "always" is not offered', () => {
    const rules = [{ id: 'r', scope: { kind: 'tool' as const, tool: 'save_memory' }, created_at: '' }];
    for (const name of ['save_memory', 'agent_skill_manage']) {
      const evaluated = evaluateCall(call(tool(name)), state({ rules, tools: { [name]: 'allow' } }), null);
      expect(evaluated).toMatchObject({ risk: 'memory_write', policy: 'ask', preApproved: false, untrustedSources: [page] });
      expect(alwaysScope(evaluated!)).toBeUndefined();
    }
  });

  it('schedule_task keeps its own always-ask risk after untrusted content, names the sources, and the memory_write default cannot relax it', () => {
    const scheduling: AgentTool = { ...tool('schedule_task'), approvalDetails: () => ({ name: 'n' }) as never };
    const relaxed = state({ defaults: { ...DEFAULT_RISK_POLICIES, memory_write: 'allow' }, tools: { schedule_task: 'allow' } });
    const evaluated = evaluateCall(call(scheduling), relaxed, null);
    expect(evaluated).toMatchObject({ risk: 'schedule_task', policy: 'ask', preApproved: false, untrustedSources: [page] });
    expect(alwaysScope(evaluated!)).toBeUndefined();
  });

  it('without untrusted content the usual policy applies; an MCP tool of the same name is not a memory write', () => {
    expect(evaluateCall(call(tool('save_memory'), []), state(), null)).toMatchObject({ risk: 'write', policy: 'allow' });
    const mcp = tool('save_memory', { server: 's', tool: 'save_memory', readOnly: false, destructive: false });
    expect(evaluateCall(call(mcp), state(), null)).toMatchObject({ risk: 'mcp' });
  });

  it('the class default relaxes it, and the tool\'s own deny still wins', () => {
    const relaxed = state({ defaults: { ...DEFAULT_RISK_POLICIES, memory_write: 'allow' } });
    expect(evaluateCall(call(tool('save_memory')), relaxed, null)).toMatchObject({ risk: 'memory_write', policy: 'allow' });
    const denied = state({ defaults: { ...DEFAULT_RISK_POLICIES, memory_write: 'allow' }, tools: { save_memory: 'deny' } });
    expect(evaluateCall(call(tool('save_memory')), denied, null)).toMatchObject({ policy: 'deny' });
  });
});

describe('browser actions the tool escalates', () => {
  const detail = { action: 'click', url: 'https://shop.test/', reason: 'form_submit' as const, element: 'button "Pay" [e3]' };
  const browser = (escalate: boolean): AgentTool => ({
    ...tool('browser'),
    escalation: (args) => (escalate && args['action'] === 'click' ? { risk: 'browser_action', browser: detail } : null),
  });
  const click = (agentTool: AgentTool): ApprovalCall => ({ ...call(agentTool, []), rawArguments: '{"action":"click","ref":"e3"}' });

  it('Scenario: a form submission asks even when the browser tool is allowed; no rule covers it and "always" is not offered', () => {
    const rules = [{ id: 'r', scope: { kind: 'tool' as const, tool: 'browser' }, created_at: '' }];
    const evaluated = evaluateCall(click(browser(true)), state({ rules, tools: { browser: 'allow' } }), null);
    expect(evaluated).toMatchObject({ risk: 'browser_action', policy: 'ask', preApproved: false, browser: detail });
    expect(alwaysScope(evaluated!)).toBeUndefined();
  });

  it('only the class default relaxes it; a deny of the tool wins; other calls keep the tool class', () => {
    const relaxed = state({ defaults: { ...DEFAULT_RISK_POLICIES, browser_action: 'allow' } });
    expect(evaluateCall(click(browser(true)), relaxed, null)).toMatchObject({ risk: 'browser_action', policy: 'allow' });
    const denied = state({ defaults: { ...DEFAULT_RISK_POLICIES, browser_action: 'allow' }, tools: { browser: 'deny' } });
    expect(evaluateCall(click(browser(true)), denied, null)).toMatchObject({ policy: 'deny' });
    expect(evaluateCall(click(browser(false)), state(), null)).toMatchObject({ risk: 'network', policy: 'allow' });
  });
});

describe('a turn that answers someone other than the owner', () => {
  const nonOwner = (agentTool: AgentTool, rawArguments = '{"path":"a.txt","content":"x"}'): ApprovalCall => ({
    chatId: 'c',
    turnId: 't',
    callId: 'x',
    tool: agentTool,
    rawArguments,
    untrustedSources: [{ kind: 'channel_message', name: 'telegram:Mallory' }],
    requester: 'non_owner',
  });

  it('Scenario: A group member cannot use the owner\'s allow policies', () => {
    const relaxed = state({ defaults: { ...DEFAULT_RISK_POLICIES, write: 'allow', network: 'allow', exec: 'allow' } });
    for (const name of ['write_file', 'web_fetch', 'browser']) {
      const evaluated = evaluateCall(nonOwner(tool(name)), relaxed, null);
      expect(evaluated).toMatchObject({ policy: 'ask', preApproved: false, nonOwner: true, untrustedSources: [{ kind: 'channel_message', name: 'telegram:Mallory' }] });
      expect(alwaysScope(evaluated!)).toBeUndefined();
    }
    const exec = evaluateCall(nonOwner(tool('exec'), '{"command":"ls"}'), relaxed, null);
    expect(exec).toMatchObject({ risk: 'exec', policy: 'ask', preApproved: false });
    // the same call of the owner runs under the owner's policy
    expect(evaluateCall({ ...nonOwner(tool('write_file')), requester: 'owner' }, relaxed, null)).toMatchObject({ policy: 'allow' });
  });

  it('no standing rule or Skill pre-approval covers a non-owner\'s call; a deny stays a deny; read-only calls run', () => {
    const rules = [
      { id: 'r1', scope: { kind: 'tool' as const, tool: 'write_file' }, created_at: '' },
      { id: 'r2', scope: { kind: 'exec_program' as const, program: 'ls' }, created_at: '' },
    ];
    const skills = { preApprovals: () => ({ tools: new Set(['write_file']), mcp: new Set<string>(), exec: [], anyExec: true }) };
    const withRules = state({ rules });
    expect(evaluateCall(nonOwner(tool('write_file')), withRules, skills)).toMatchObject({ policy: 'ask', preApproved: false });
    expect(evaluateCall(nonOwner(tool('exec'), '{"command":"ls"}'), withRules, skills)).toMatchObject({ policy: 'ask', preApproved: false });
    expect(evaluateCall(nonOwner(tool('write_file')), state({ tools: { write_file: 'deny' } }), null)).toMatchObject({ policy: 'deny' });
    const mcp = tool('lookup', { server: 's', tool: 'lookup', readOnly: false, destructive: false });
    expect(evaluateCall(nonOwner(mcp), state({ servers: { s: 'allow' } }), null)).toMatchObject({ risk: 'mcp', policy: 'ask' });
    expect(evaluateCall(nonOwner(tool('read_file')), state(), null)).toMatchObject({ risk: 'read', policy: 'allow' });
    expect(evaluateCall(nonOwner(tool('save_memory')), state({ defaults: { ...DEFAULT_RISK_POLICIES, memory_write: 'allow' } }), null)).toMatchObject({
      risk: 'memory_write',
      policy: 'ask',
    });
  });
});
