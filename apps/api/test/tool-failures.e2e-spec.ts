/**
 * What a client sees of a failed tool call: an MCP tool answering `isError: true` (the repo's stdio test server's
 * `fail` tool) and a built-in registry failure are `ok: false` live and in the public message history, and the
 * retry hint the agent appends for the model never reaches a client (it stays in the model context and history.jsonl).
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { PublicToolRecord, ServerEvent, SessionMessagesResponse } from '@cashcode/contracts';
import { TOOL_ERROR_HINT } from '../src/common/model-hints';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { allowToolsWithoutAsking, configureFakeModel, WsTestClient } from './support/ws-client';

type ToolResultEvent = Extract<ServerEvent, { event: 'tool_result' }>;
interface CompletionBody {
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}
const toolMessage = (r: RecordedRequest | undefined, callId: string): string | null | undefined =>
  (r?.body as CompletionBody).messages.find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content;

describe('Failed tool calls as the client sees them (e2e)', () => {
  let app: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let catalogDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    fake = await FakeModelServer.start();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-tool-failures-'));
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: writeCatalog(catalogDir, { kit: stdioEntry() }) } });
    await configureFakeModel(app.httpUrl, fake.baseUrl);
    await allowToolsWithoutAsking(app.httpUrl);
    client = await WsTestClient.connect(app.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    await fake?.close();
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  beforeEach(() => fake.reset());

  async function turn(chatId: string, content: string): Promise<ToolResultEvent[]> {
    const before = client.chatEvents(chatId).length;
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({
      type: 'message',
      chat_id: chatId,
      content,
      metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' }, selected_mcp_connectors: [{ server: 'kit' }] },
    });
    await done;
    return client.chatEvents(chatId).slice(before).filter((e) => e.event === 'tool_result') as ToolResultEvent[];
  }

  async function publicTools(chatId: string): Promise<PublicToolRecord[]> {
    const res = await request(app.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200);
    return (res.body as SessionMessagesResponse).messages.flatMap((m) => m.tools ?? []);
  }

  it('Scenario: an MCP tool that answers isError is a failed call live and after reload', async () => {
    const chatId = 'tool-fail-mcp';
    fake.enqueue(
      { toolCalls: [{ id: 'f1', name: 'mcp_kit_fail', arguments: '{"message":"the disk is full"}' }] },
      { content: 'The tool failed.' },
    );
    const [live] = await turn(chatId, 'try the failing tool');
    expect(live).toMatchObject({ call_id: 'f1', tool_name: 'mcp_kit_fail', ok: false });
    expect(live!.result).toContain('the disk is full');
    const [stored] = await publicTools(chatId);
    expect(stored).toMatchObject({ call_id: 'f1', ok: false });
    expect(stored!.result_preview).toContain('the disk is full');
  });

  it('Scenario: the retry hint for the model never reaches a client', async () => {
    const chatId = 'tool-fail-hint';
    fake.enqueue(
      {
        toolCalls: [
          { id: 'u1', name: 'no_such_tool', arguments: '{}' },
          { id: 'u2', name: 'save_memory', arguments: '{"content": "unterminated' },
        ],
      },
      { content: 'I will try something else.' },
    );
    const live = await turn(chatId, 'break things');
    expect(live.map((r) => [r.call_id, r.ok])).toEqual([
      ['u1', false],
      ['u2', false],
    ]);
    expect(live[0]!.result).toMatch(/^Error: Tool 'no_such_tool' not found\./u);
    for (const result of live) expect(result.result).not.toContain('Analyze the error above');
    const stored = await publicTools(chatId);
    expect(stored.map((t) => [t.call_id, t.ok])).toEqual([
      ['u1', false],
      ['u2', false],
    ]);
    for (const tool of stored) expect(tool.result_preview).not.toContain('Analyze the error above');
    expect(stored[1]!.result_preview).toMatch(/^Error: Invalid arguments for save_memory/u);
    // the model had the hint, and history.jsonl keeps it for the next turn's context
    expect(toolMessage(fake.completions[1], 'u1')?.endsWith(TOOL_ERROR_HINT)).toBe(true);
    const history = await fs.readFile(join(app.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
    expect(history).toContain(JSON.stringify(TOOL_ERROR_HINT).slice(1, -1));
  });
});
