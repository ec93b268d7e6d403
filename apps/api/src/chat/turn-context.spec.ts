/**
 * The chat service's turn building blocks: the turn context (real system prompt builder, chat memory, Skill turn
 * service and MCP service on temp dirs; the MCP catalog is empty) and the mapping of runner notices to WS events.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { MessageMetadata, ServerEvent } from '@cashcode/contracts';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { ToolRegistry } from '../agent/tool-registry';
import { loadConfig } from '../config/app-config';
import { AppEventBus } from '../events/event-bus';
import type { McpService } from '../mcp/mcp.service';
import { createMemoryStores, type MemoryStores } from '../memory/memory-stores';
import { SkillCatalog } from '../skills/skill-catalog';
import { SkillStore } from '../skills/skill-store';
import { SkillTurnService } from '../skills/skill-turn.service';
import { ApprovalAuditLog } from '../approvals/approval-audit';
import { SkillGrantStore } from '../skills/skill-grant-store';
import { SkillGrantsService } from '../skills/skill-grants.service';
import { SkillsAdminService } from '../skills/skills-admin.service';
import { buildTurnContext, type TurnContextSources } from './turn-context';
import { turnEndEvents, turnEventsListener } from './turn-events-mapper';
import { createMcpServices, type McpServices } from '../../test/support/mcp-services';

const LLM: MessageMetadata['llm'] = { provider: 'openai_compatible', model: 'test-model' };

describe('buildTurnContext', () => {
  let dir: string;
  let sources: TurnContextSources;
  let memory: MemoryStores;
  let mcpServices: McpServices;
  let mcp: McpService;
  let registry: ToolRegistry;
  const base = { chatId: 'chat-1', turnId: 'c'.repeat(32), signal: new AbortController().signal, history: [] };

  beforeAll(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-turn-'));
    const catalogPath = join(dir, 'mcp_config.json');
    await fs.writeFile(catalogPath, '{}');
    const config = loadConfig({ CASHCODE_DATA_DIR: join(dir, 'data'), CASHCODE_MCP_CATALOG: catalogPath }, dir);
    memory = createMemoryStores(config);
    registry = new ToolRegistry();
    mcpServices = createMcpServices(config, { registry, bus: new AppEventBus(new EventEmitter2()), memory });
    mcp = mcpServices.service;
    await mcpServices.init();
    await fs.mkdir(config.skillsBuiltinDir, { recursive: true });
    const store = new SkillStore({
      builtin: config.skillsBuiltinDir,
      user: config.skillsUserDir,
      agent: config.skillsAgentDir,
      snapshots: config.skillSnapshotsDir,
    });
    await store.prepare();
    const catalog = new SkillCatalog(
      store,
      { hasTool: (name) => registry.has(name), mcpServerConfigured: () => false },
      { binPath: '', envNames: new Set() },
    );
    await catalog.refresh();
    await new SkillsAdminService(store, catalog).create({
      name: 'weather',
      content: '---\nname: weather\ndescription: Weather reports\n---\n\nAsk for the city first.\n',
      source: 'user',
    });
    const grants = new SkillGrantsService(store, catalog, new SkillGrantStore(config), new ApprovalAuditLog(config));
    sources = {
      prompt: new SystemPromptBuilder(memory.documents),
      mcp,
      skills: new SkillTurnService(store, catalog, registry, memory.history, mcp, grants),
    };
  });

  afterAll(async () => {
    await mcpServices.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: a plain message: system prompt, history, the message; the user input as sent', async () => {
    const history = [
      { role: 'user' as const, content: 'earlier' },
      { role: 'assistant' as const, content: 'answer' },
    ];
    const context = await buildTurnContext(sources, { ...base, history, content: '  hello ', metadata: { llm: LLM } });
    expect(context.messages).toHaveLength(4);
    expect(context.messages[0]).toMatchObject({ role: 'system' });
    expect(context.messages.slice(1)).toEqual([...history, { role: 'user', content: '  hello ' }]);
    expect(context.user).toEqual({ content: '  hello ' });
    expect(context.skillReceipts).toEqual([]);
    expect([...context.temporaryTools]).toEqual([]);
  });

  it("Scenario: tool_search or the owner's message naming a deferred tool activates it", async () => {
    registry.register({
      name: 'browser',
      description: 'Drive a browser.',
      parameters: { type: 'object', properties: {} },
      readOnly: false,
      deferred: { keywords: ['website'] },
      execute: async () => 'ok',
    });
    const active = () =>
      registry
        .visibleTools({ chatId: 'chat-deferred', temporary: new Set() })
        .map((tool) => tool.name)
        .filter((name) => name === 'browser');
    // a channel sender who is not the owner names it: nothing is activated
    const stranger = [{ kind: 'channel_message' as const, name: 'mallory' }];
    await buildTurnContext(sources, { ...base, chatId: 'chat-deferred', content: 'open the website', metadata: { llm: LLM }, untrustedSources: stranger });
    expect(active()).toEqual([]);
    await buildTurnContext(sources, { ...base, chatId: 'chat-deferred', content: 'Open the website, please', metadata: { llm: LLM } });
    expect(active()).toEqual(['browser']);
    registry.unregister('browser');
  });

  it('Scenario: a leading @skill loads it into a second system message; its receipt leads the durable messages', async () => {
    const mentioned: MessageMetadata['mentioned_skills'] = [{ name: 'weather', label: 'Weather' }];
    const context = await buildTurnContext(sources, {
      ...base,
      content: '@weather in Paris',
      metadata: { llm: LLM, mentioned_skills: mentioned },
    });
    expect(context.messages.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    expect(context.messages[1]?.content).toContain('Ask for the city first.');
    expect(context.messages[2]).toEqual({ role: 'user', content: 'in Paris' });
    expect(context.skillReceipts).toEqual([{ role: 'assistant', content: expect.stringMatching(/^\[Skill loaded: weather/) }]);
    expect(context.user).toEqual({ content: '@weather in Paris', mentioned_skills: mentioned });
  });

  it('Scenario: a Skill selected in a later turn goes after the history, right before the user message', async () => {
    const history = [
      { role: 'user' as const, content: 'earlier question' },
      { role: 'assistant' as const, content: 'earlier answer' },
    ];
    // another chat and turn: the Skill is not loaded in them yet
    const ids = { chatId: 'chat-later', turnId: 'd'.repeat(32) };
    const plain = await buildTurnContext(sources, { ...base, ...ids, history, content: 'hello', metadata: { llm: LLM } });
    const selected = await buildTurnContext(sources, {
      ...base,
      ...ids,
      history,
      content: 'in Paris',
      metadata: { llm: LLM, mentioned_skills: [{ name: 'weather', label: 'Weather' }] },
    });
    expect(selected.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'system', 'user']);
    expect(selected.messages[3]?.content).toContain('Ask for the city first.');
    // the request up to the history is the one a turn without a selection sends
    expect(selected.messages.slice(0, 3)).toEqual(plain.messages.slice(0, 3));
  });

  it('Scenario: an unknown leading @word is plain text; an unavailable selection is a warning and the turn still runs', async () => {
    const plain = await buildTurnContext(sources, { ...base, content: '@missing do it', metadata: { llm: LLM } });
    expect(plain.warnings).toEqual([]);
    expect(plain.messages.at(-1)).toEqual({ role: 'user', content: '@missing do it' });
    expect(plain.messages.map((message) => message.role)).toEqual(['system', 'user']);

    const selected: MessageMetadata['mentioned_skills'] = [{ name: 'missing', label: 'Missing' }];
    const connectors: MessageMetadata['selected_mcp_connectors'] = [{ server: 'nope', label: 'Nope' }];
    const warned = await buildTurnContext(sources, {
      ...base,
      content: 'hi',
      metadata: { llm: LLM, mentioned_skills: selected, selected_mcp_connectors: connectors },
    });
    expect(warned.warnings).toEqual([
      { subject: 'mcp', name: 'nope', code: 'mcp_prepare_failed', detail: 'Unable to prepare MCP nope: MCP server is not configured' },
      { subject: 'skill', name: 'missing', code: 'skill_not_found', detail: expect.stringMatching(/^Unable to load @missing: /) },
    ]);
    expect(warned.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
    expect([...warned.temporaryTools]).toEqual([]);
  });
});

describe('turn events mapping', () => {
  it('Scenario: runner notices become delta, tool_call, tool_result and approval events of the chat and stream', () => {
    const events: ServerEvent[] = [];
    const listener = turnEventsListener('chat-1', 7, (event) => events.push(event));
    listener.delta('Hel');
    listener.toolCall({ callId: 'call-1', name: 'read_file', arguments: '{"path": "a"}' });
    listener.toolResult({ callId: 'call-1', name: 'read_file', result: 'text', ok: true, durationMs: 12 });
    const approval = { event: 'approval_resolved', chat_id: 'chat-1', call_id: 'call-1' } as unknown as ServerEvent;
    listener.approvalResolved?.(approval as never);
    expect(events).toEqual([
      { event: 'delta', chat_id: 'chat-1', text: 'Hel', stream_id: 7 },
      { event: 'tool_call', chat_id: 'chat-1', tool_name: 'read_file', stream_id: 7, call_id: 'call-1', arguments: '{"path": "a"}' },
      {
        event: 'tool_result',
        chat_id: 'chat-1',
        tool_name: 'read_file',
        result: 'text',
        stream_id: 7,
        call_id: 'call-1',
        ok: true,
        duration_ms: 12,
      },
      approval,
    ]);
  });

  it('Scenario: a turn ends with stream_end then done (cancelled or not)', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
    expect(turnEndEvents('chat-1', 7, { durationSec: 1.25, usage, cancelled: true })).toEqual([
      { event: 'stream_end', chat_id: 'chat-1', stream_id: 7 },
      { event: 'done', chat_id: 'chat-1', duration_sec: 1.25, usage, cancelled: true },
    ]);
  });
});
