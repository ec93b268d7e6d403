import type { AgentTool, ToolContext } from './agent-tool';
import { deferredToolsNamedIn, firstSentence } from './deferred-tools';
import { ToolRegistry, type ToolActivationSource, type ToolAllowlist, type ToolScope } from './tool-registry';

function tool(name: string, keywords?: string[], run: AgentTool['execute'] = async () => `${name} ran`): AgentTool {
  return {
    name,
    description: `${name} tool. More words.`,
    parameters: { type: 'object', properties: {} },
    readOnly: false,
    ...(keywords ? { deferred: { keywords } } : {}),
    execute: run,
  };
}

/** An activation set in memory, in activation order (like McpActivations). */
class MemoryActivations implements ToolActivationSource {
  readonly sets = new Map<string, string[]>();
  isActivated(chatId: string, name: string): boolean {
    return this.sets.get(chatId)?.includes(name) ?? false;
  }
  touch = jest.fn();
  activeTools(chatId: string): string[] {
    return this.sets.get(chatId) ?? [];
  }
  async activate(chatId: string, tools: readonly string[]): Promise<void> {
    const set = this.sets.get(chatId) ?? [];
    for (const name of tools) if (!set.includes(name)) set.push(name);
    this.sets.set(chatId, set);
  }
}

const ctx = (chatId = 'chat-1'): ToolContext => ({ chatId, turnId: 'a'.repeat(32), signal: new AbortController().signal });
const names = (tools: AgentTool[]) => tools.map((t) => t.name);

describe('deferred tools (openspec agent-runner "Requirement: Deferred tool view")', () => {
  let registry: ToolRegistry;
  let activations: MemoryActivations;
  const scope = (extra: Partial<ToolScope> = {}): ToolScope => ({ chatId: 'chat-1', temporary: new Set(), ...extra });

  beforeEach(() => {
    registry = new ToolRegistry();
    activations = new MemoryActivations();
    registry.setActivationSource(activations);
    for (const name of ['read_file', 'write_file', 'mcp_srv_get']) registry.register(tool(name));
    registry.register(tool('browser', ['website']));
    registry.register(tool('schedule_task', ['schedule', 'every day']));
    registry.register(tool('delegate', ['sub-agent']));
    registry.registerMeta(tool('tool_search'));
  });

  it('Scenario: a deferred tool is offered once activated, after the others', async () => {
    const before = names(registry.visibleTools(scope()));
    expect(before).toEqual(['read_file', 'tool_search', 'write_file']);
    expect(names(registry.deferredTools())).toEqual(['browser', 'delegate', 'schedule_task']);
    await activations.activate('chat-1', ['delegate', 'mcp_srv_get', 'browser']);
    const after = names(registry.visibleTools(scope()));
    expect(after).toEqual(['read_file', 'tool_search', 'write_file', 'delegate', 'mcp_srv_get', 'browser']);
    expect(after.slice(0, before.length)).toEqual(before);
    // another chat has activated nothing
    expect(names(registry.visibleTools({ chatId: 'chat-2', temporary: new Set() }))).toEqual(before);
  });

  it('Scenario: a direct call of a deferred tool by its name activates it and runs it through the gate', async () => {
    // the gate asks the registry which tool a call would run: a deferred one runs without being listed first
    expect(registry.runnable('schedule_task', scope(), '{}')?.name).toBe('schedule_task');
    const result = await registry.execute('schedule_task', '{}', ctx(), scope());
    expect(result).toMatchObject({ ok: true, model: 'schedule_task ran' });
    expect(activations.activeTools('chat-1')).toEqual(['schedule_task']);
    expect(names(registry.visibleTools(scope())).at(-1)).toBe('schedule_task');
    // a second call refreshes it instead of activating it again
    await registry.execute('schedule_task', '{}', ctx(), scope());
    expect(activations.touch).toHaveBeenCalledWith('chat-1', 'schedule_task');
    // a sub-agent's call runs but activates nothing in its parent's chat
    await registry.execute('browser', '{}', ctx(), scope({ only: new Set(['browser']) }));
    expect(activations.activeTools('chat-1')).toEqual(['schedule_task']);
    // an mcp_ tool still has to be activated first
    expect(registry.runnable('mcp_srv_get', scope(), '{}')).toBeNull();
  });

  it('Scenario: a turn\'s explicit subset offers the deferred tools it names and only those', async () => {
    await activations.activate('chat-1', ['delegate']);
    // an automation's subset (automation-tools.ts): the tools it names, and offers the deferred ones among them
    const named = new Set(['read_file', 'browser']);
    const allow: ToolAllowlist = { allows: (t) => named.has(t.name), offers: (name) => named.has(name) };
    expect(names(registry.visibleTools(scope({ allow })))).toEqual(['read_file', 'browser']);
    // delegate is activated in the chat, but the subset leaves it out: neither offered nor run
    expect(registry.runnable('delegate', scope({ allow }), '{}')).toBeNull();
    const refused = await registry.execute('delegate', '{}', ctx(), scope({ allow }));
    expect(refused.ok).toBe(false);
    expect(refused.model).toContain("The tool 'delegate' is not available in this run");
    expect(refused.model).not.toContain('delegate ran');
    // a sub-agent given schedule_task is offered it; the one it was not given is refused
    const only = new Set(['read_file', 'schedule_task']);
    expect(names(registry.visibleTools(scope({ only })))).toEqual(['read_file', 'schedule_task']);
    expect((await registry.execute('browser', '{}', ctx(), scope({ only }))).ok).toBe(false);
  });

  it('Scenario: tool_search or the owner\'s message naming a deferred tool activates it', () => {
    const deferred = registry.deferredTools();
    expect(names(deferredToolsNamedIn(deferred, 'Please use the BROWSER for this'))).toEqual(['browser']);
    expect(names(deferredToolsNamedIn(deferred, 'schedule it every  day'))).toEqual(['schedule_task']);
    expect(names(deferredToolsNamedIn(deferred, 'hand it to a sub agent'))).toEqual(['delegate']);
    expect(names(deferredToolsNamedIn(deferred, 'call schedule_task and delegate'))).toEqual(['delegate', 'schedule_task']);
    // whole words only: no accidental activation by a longer word
    expect(deferredToolsNamedIn(deferred, 'the websites rescheduled everyday; browsers delegated')).toEqual([]);
    expect(deferredToolsNamedIn(deferred, '   ')).toEqual([]);
    expect(firstSentence('Drive a browser. Actions: navigate.')).toBe('Drive a browser.');
  });
});
