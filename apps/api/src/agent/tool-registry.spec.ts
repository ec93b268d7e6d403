import type { AgentTool, ToolContext } from './agent-tool';
import {
  TOOL_ERROR_HINT,
  ToolExecutionCancelledError,
  ToolRegistry,
  isToolFailureText,
  toolSchema,
  type ToolActivationSource,
  type ToolScope,
} from './tool-registry';

function tool(name: string, run: AgentTool['execute'] = async () => 'ok', readOnly = false): AgentTool {
  return {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: {} },
    readOnly,
    execute: run,
  };
}

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { chatId: 'chat-1', turnId: 'a'.repeat(32), signal };
}

const scope = (temporary: string[] = []): ToolScope => ({ chatId: 'chat-1', temporary: new Set(temporary) });

describe(ToolRegistry.name, () => {
  let registry: ToolRegistry;

  beforeEach(() => {
    registry = new ToolRegistry();
  });

  describe('visibility (openspec agent-runner)', () => {
    it('Scenario: built-in and meta tools first, then activated mcp_ tools, then temporary ones', () => {
      for (const name of ['write_file', 'mcp_zeta_run', 'exec', 'mcp_alpha_get', 'mcp_beta_list', 'save_memory']) {
        registry.register(tool(name));
      }
      registry.registerMeta(tool('tool_search'));
      registry.registerMeta(tool('mcp_prepare'));
      const activation: ToolActivationSource = {
        isActivated: (_chat, name) => name === 'mcp_zeta_run',
        touch: jest.fn(),
      };
      registry.setActivationSource(activation);
      const names = registry.visibleTools(scope(['mcp_alpha_get'])).map((t) => t.name);
      expect(names).toEqual([
        'exec',
        'save_memory',
        'tool_search',
        'write_file',
        'mcp_prepare',
        'mcp_alpha_get',
        'mcp_zeta_run',
      ]);
    });

    it('Scenario: activated mcp_ tools keep their activation order, so activating one appends it', () => {
      for (const name of ['read_file', 'mcp_alpha_get', 'mcp_beta_list', 'mcp_zeta_run', 'mcp_temp_x']) registry.register(tool(name));
      registry.registerMeta(tool('mcp_prepare'));
      const order: string[] = [];
      registry.setActivationSource({
        isActivated: (_chat, name) => order.includes(name),
        touch: jest.fn(),
        activeTools: () => order,
      });
      order.push('mcp_zeta_run', 'mcp_alpha_get');
      const before = registry.visibleTools(scope([])).map((t) => t.name);
      expect(before).toEqual(['read_file', 'mcp_prepare', 'mcp_zeta_run', 'mcp_alpha_get']);
      order.push('mcp_beta_list');
      const after = registry.visibleTools(scope(['mcp_temp_x'])).map((t) => t.name);
      expect(after).toEqual(['read_file', 'mcp_prepare', 'mcp_zeta_run', 'mcp_alpha_get', 'mcp_beta_list', 'mcp_temp_x']);
      expect(after.slice(0, before.length)).toEqual(before);
    });

    it('Scenario: re-registering a name replaces the tool; unregister removes it', async () => {
      registry.register(tool('echo', async () => 'first'));
      registry.register(tool('echo', async () => 'second'));
      expect(registry.names()).toEqual(['echo']);
      const result = await registry.execute('echo', '{}', context(), scope());
      expect(result.model).toBe('second');
      expect(registry.unregister('echo')).toBe(true);
      expect(registry.visibleTools(scope())).toEqual([]);
    });

    it('Scenario: tool schemas are OpenAI function tools', () => {
      registry.register(tool('echo'));
      expect(registry.visibleTools(scope()).map(toolSchema)).toEqual([
        { type: 'function', function: { name: 'echo', description: 'echo tool', parameters: { type: 'object', properties: {} } } },
      ]);
    });
  });

  describe('execution errors (openspec agent-runner)', () => {
    it('Scenario: an unknown tool lists every registered tool, with the hint', async () => {
      registry.register(tool('read_file'));
      registry.register(tool('mcp_x_y'));
      const result = await registry.execute('nope', '{}', context(), scope());
      expect(result.model).toBe(`Error: Tool 'nope' not found. Available: read_file, mcp_x_y${TOOL_ERROR_HINT}`);
      expect(result.ok).toBe(false);
    });

    it('Scenario: arguments nested deeper than the JSON limit are a tool error', async () => {
      const run = jest.fn(async () => 'ran');
      registry.register(tool('echo', run));
      const result = await registry.execute('echo', `{"a":${'['.repeat(60_000)}${']'.repeat(60_000)}}`, context(), scope());
      expect(run).not.toHaveBeenCalled();
      expect(result.ok).toBe(false);
      expect(result.model).toMatch(/^Error: Invalid arguments for echo: the arguments are nested too deeply \(more than 64 levels\)/);
    });

    it('Scenario: invalid JSON arguments are a tool error, never silently {}', async () => {
      const run = jest.fn(async () => 'ran');
      registry.register(tool('echo', run));
      const result = await registry.execute('echo', '{"a": ', context(), scope());
      expect(run).not.toHaveBeenCalled();
      expect(result.ok).toBe(false);
      expect(result.model).toMatch(/^Error: Invalid arguments for echo: the arguments are not valid JSON/);
      expect(result.model.endsWith(TOOL_ERROR_HINT)).toBe(true);
    });

    it('Scenario: non-object arguments are a tool error', async () => {
      registry.register(tool('echo'));
      const result = await registry.execute('echo', '[1,2]', context(), scope());
      expect(result.model).toMatch(/^Error: Invalid arguments for echo: the arguments must be a JSON object/);
    });

    it('Scenario: empty arguments mean no arguments', async () => {
      const run = jest.fn(async (args: Record<string, unknown>) => JSON.stringify(args));
      registry.register(tool('echo', run));
      const result = await registry.execute('echo', '', context(), scope());
      expect(result.model).toBe('{}');
      expect(result.ok).toBe(true);
    });

    it('Scenario: a throwing tool becomes `Error executing <name>: <message>` with the hint', async () => {
      registry.register(
        tool('boom', async () => {
          throw new Error('missing required argument: path');
        }),
      );
      const result = await registry.execute('boom', '{}', context(), scope());
      expect(result.model).toBe(`Error executing boom: missing required argument: path${TOOL_ERROR_HINT}`);
      expect(result.ok).toBe(false);
    });

    it('Scenario: an mcp_ tool that is not activated is refused without running', async () => {
      const run = jest.fn(async () => 'ran');
      registry.register(tool('mcp_srv_do', run));
      const result = await registry.execute('mcp_srv_do', '{}', context(), scope());
      expect(run).not.toHaveBeenCalled();
      expect(result.model).toContain("Tool 'mcp_srv_do' is not activated");
      const temporary = await registry.execute('mcp_srv_do', '{}', context(), scope(['mcp_srv_do']));
      expect(temporary.model).toBe('ran');
    });

    it('Scenario: executing an activated mcp_ tool refreshes its activation', async () => {
      const touch = jest.fn();
      registry.setActivationSource({ isActivated: () => true, touch });
      registry.register(tool('mcp_srv_do'));
      await registry.execute('mcp_srv_do', '{}', context(), scope());
      expect(touch).toHaveBeenCalledWith('chat-1', 'mcp_srv_do');
    });

    it('Scenario: projections default to the model text; ToolResult.ok wins over text detection', async () => {
      registry.register(tool('proj', async () => ({ model: 'M', public: 'P', persisted: 'S' })));
      registry.register(tool('flagged', async () => ({ model: 'looks fine', ok: false })));
      const proj = await registry.execute('proj', '{}', context(), scope());
      expect([proj.model, proj.public, proj.persisted, proj.ok]).toEqual(['M', 'P', 'S', true]);
      const flagged = await registry.execute('flagged', '{}', context(), scope());
      expect(flagged.ok).toBe(false);
    });

    it('Scenario: cancelling the turn stops waiting for a tool that ignores the signal', async () => {
      registry.register(tool('stuck', () => new Promise<string>(() => undefined)));
      const controller = new AbortController();
      const running = registry.execute('stuck', '{}', context(controller.signal), scope());
      controller.abort();
      await expect(running).rejects.toBeInstanceOf(ToolExecutionCancelledError);
    });
  });

  describe(isToolFailureText.name, () => {
    it.each([
      ['Error: x', true],
      ['   Error executing y', true],
      ['{"error": "missing_dependency"}', true],
      ['{"success": false}', true],
      ['{"success": true, "error": null}', false],
      ['All good', false],
      ['{not json', false],
      ['[1]', false],
    ])('Scenario: failure detection of %j is %s', (text, expected) => {
      expect(isToolFailureText(text)).toBe(expected);
    });
  });
});
