/**
 * MCP through real turns (WebSocket gateway + the fake model): tool_search → mcp_prepare → call → "Hello, Cash",
 * activation visible in the next turn, the third-party server-everything `echo`, and a grep of responses, events,
 * history, metadata, model requests and logs for a header secret.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import {
  ensureMcpServersBuilt,
  everythingStdioEntry,
  startTestHttpServer,
  stdioEntry,
  writeCatalog,
  type RunningMcpServer,
} from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { unframed } from './support/untrusted-frame';
import { allowToolsWithoutAsking, configureFakeModel, WsTestClient } from './support/ws-client';

const SECRET = 'chat-header-secret-a41f09';

type ToolResultEvent = Extract<ServerEvent, { event: 'tool_result' }>;
interface CompletionBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null; name?: string }>;
}
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;
const toolNames = (r: RecordedRequest | undefined) => (bodyOf(r).tools ?? []).map((t) => t.function.name);

describe('MCP through chat turns (e2e)', () => {
  let app: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let sse: RunningMcpServer;
  let catalogDir: string;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    [fake, sse] = await Promise.all([
      FakeModelServer.start(),
      startTestHttpServer('sse', { requireHeaders: [`X-Api-Key=${SECRET}`] }),
    ]);
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-chat-'));
    const catalog = writeCatalog(catalogDir, { hello: stdioEntry(), everything: everythingStdioEntry() });
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(app.httpUrl, fake.baseUrl);
    // MCP tools run without asking here; approvals have their own suite (approvals.e2e-spec.ts)
    await allowToolsWithoutAsking(app.httpUrl);
    await request(app.httpUrl)
      .post('/api/mcp/servers')
      .send({ name: 'remote', display_name: 'Remote', url: sse.url, headers: { 'X-Api-Key': SECRET } })
      .expect(201);
    client = await WsTestClient.connect(app.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    await Promise.all([fake?.close(), sse?.stop()]);
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  beforeEach(() => fake.reset());

  async function turn(chatId: string, content: string, connectors?: string[]): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    if (connectors) {
      client.send({
        type: 'message',
        chat_id: chatId,
        content,
        metadata: {
          llm: { provider: 'openai_compatible', model: 'fake-model' },
          selected_mcp_connectors: connectors.map((server) => ({ server })),
        },
      });
    } else {
      client.sendMessage(chatId, content);
    }
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  const results = (events: ServerEvent[]) => events.filter((e) => e.event === 'tool_result') as ToolResultEvent[];

  it('Scenario: tool_search → mcp_prepare → call answers "Hello, Cash" in one turn', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 's1', name: 'tool_search', arguments: '{"query":"say hello"}' }] },
      { toolCalls: [{ id: 'p1', name: 'mcp_prepare', arguments: '{"server_name":"hello"}' }] },
      { toolCalls: [{ id: 'h1', name: 'mcp_hello_say_hello', arguments: '{}' }] },
      { content: 'The server says: Hello, Cash' },
    );
    const events = await turn('mcp-chat-1', 'greet me through MCP');
    expect(events.at(-1)?.event).toBe('done');
    const [search, prepare, hello] = results(events);
    expect(search).toMatchObject({ tool_name: 'tool_search', ok: true });
    const searchMessage = bodyOf(fake.requests[1]).messages.filter((m) => m.role === 'tool').at(-1);
    expect(searchMessage?.content).toContain('`mcp_prepare(server_name="hello")`');
    expect(prepare).toMatchObject({ tool_name: 'mcp_prepare', ok: true });
    expect(hello).toMatchObject({ tool_name: 'mcp_hello_say_hello', result: 'Hello, Cash', ok: true });
    // the wrapper became visible to the model in the iteration after mcp_prepare, not before
    expect(toolNames(fake.requests[1])).not.toContain('mcp_hello_say_hello');
    expect(toolNames(fake.requests[2])).toContain('mcp_hello_say_hello');
    const toolMessages = bodyOf(fake.requests[3]).messages.filter((m) => m.role === 'tool');
    expect(unframed(toolMessages.at(-1)?.content ?? '')).toBe('Hello, Cash');
  });

  it('Scenario: the activation stays visible in the next turn of the same chat only', async () => {
    fake.enqueue({ toolCalls: [{ id: 'h2', name: 'mcp_hello_say_hello', arguments: '{}' }] }, { content: 'again' });
    const events = await turn('mcp-chat-1', 'once more');
    expect(toolNames(fake.requests[0])).toContain('mcp_hello_say_hello');
    expect(results(events)[0]).toMatchObject({ result: 'Hello, Cash', ok: true });
    const metadata = JSON.parse(await fs.readFile(join(app.config.memoryDir, 'mcp-chat-1', 'metadata.json'), 'utf8')) as {
      activated_tools: Record<string, number>;
    };
    expect(Object.keys(metadata.activated_tools)).toContain('mcp_hello_say_hello');

    fake.reset();
    fake.enqueue({ content: 'nothing to do' });
    await turn('mcp-chat-other', 'hi');
    expect(toolNames(fake.requests[0])).not.toContain('mcp_hello_say_hello');
    expect(toolNames(fake.requests[0])).toEqual(expect.arrayContaining(['tool_search', 'mcp_prepare']));
  });

  it('Scenario: a selected connector makes its tools visible for that turn only', async () => {
    fake.enqueue({ toolCalls: [{ id: 'sel1', name: 'mcp_hello_say_hello', arguments: '{}' }] }, { content: 'greeted' });
    const events = await turn('mcp-chat-selected', 'say hello', ['hello']);
    expect(events.at(-1)?.event).toBe('done');
    expect(toolNames(fake.requests[0])).toContain('mcp_hello_say_hello');
    expect(results(events)[0]).toMatchObject({ tool_name: 'mcp_hello_say_hello', result: 'Hello, Cash', ok: true });
    const metadata = JSON.parse(
      await fs.readFile(join(app.config.memoryDir, 'mcp-chat-selected', 'metadata.json'), 'utf8'),
    ) as { activated_tools?: Record<string, number> };
    expect(Object.keys(metadata.activated_tools ?? {})).not.toContain('mcp_hello_say_hello');
    const history = await fs.readFile(join(app.config.memoryDir, 'mcp-chat-selected', 'history.jsonl'), 'utf8');
    expect(JSON.parse(history.split('\n')[0]!)).toMatchObject({ role: 'user', selected_mcp_connectors: [{ server: 'hello' }] });

    fake.reset();
    fake.enqueue({ content: 'plain' });
    await turn('mcp-chat-selected', 'and now without a selection');
    expect(toolNames(fake.requests[0])).not.toContain('mcp_hello_say_hello');
  });

  it('Scenario: a selected connector that cannot be prepared is a warning and the turn still runs', async () => {
    fake.enqueue({ content: 'without it' });
    const events = await turn('mcp-chat-bad-selection', 'use a missing server', ['no_such_server']);
    const warning = events.find((event) => event.event === 'warning');
    expect(warning).toMatchObject({ event: 'warning', chat_id: 'mcp-chat-bad-selection', subject: 'mcp', name: 'no_such_server', code: 'mcp_prepare_failed' });
    expect((warning as { detail: string }).detail).toContain('Unable to prepare MCP no_such_server');
    expect(events.at(-1)).toMatchObject({ event: 'done' });
    expect(fake.completions).toHaveLength(1);
    const history = await fs.readFile(join(app.config.memoryDir, 'mcp-chat-bad-selection', 'history.jsonl'), 'utf8');
    expect(JSON.parse(history.split('\n')[0]!)).toMatchObject({ role: 'user', content: 'use a missing server' });
  });

  it('Scenario: the third-party server-everything echo tool answers through a turn', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'p2', name: 'mcp_prepare', arguments: '{"server_name":"everything"}' }] },
      { toolCalls: [{ id: 'e1', name: 'mcp_everything_echo', arguments: '{"message":"from the model"}' }] },
      { content: 'echoed' },
    );
    const events = await turn('mcp-chat-2', 'echo something');
    expect(results(events).map((r) => [r.tool_name, r.result, r.ok])).toEqual([
      ['mcp_prepare', expect.stringContaining("MCP server 'everything' is connected."), true],
      ['mcp_everything_echo', 'Echo: from the model', true],
    ]);
  });

  it('Scenario: a header secret appears in no response, event, history, metadata, model request or log line', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'p3', name: 'mcp_prepare', arguments: '{"server_name":"remote"}' }] },
      { toolCalls: [{ id: 'r1', name: 'mcp_remote_say_hello', arguments: '{}' }] },
      { content: 'remote said hello' },
    );
    const events = await turn('mcp-chat-3', 'use the remote server');
    expect(results(events).at(-1)).toMatchObject({ tool_name: 'mcp_remote_say_hello', result: 'Hello, Cash' });
    const texts: string[] = [JSON.stringify(client.events), JSON.stringify(fake.requests.map((r) => r.body))];
    for (const path of ['/api/mcp/servers', '/api/mcp/servers/remote/tools', '/api/sessions/mcp-chat-3/messages']) {
      texts.push(JSON.stringify((await request(app.httpUrl).get(path)).body));
    }
    texts.push(JSON.stringify((await request(app.httpUrl).post('/api/mcp/servers/remote/connect')).body));
    for (const file of ['history.jsonl', 'metadata.json']) {
      texts.push(await fs.readFile(join(app.config.memoryDir, 'mcp-chat-3', file), 'utf8'));
    }
    for (const file of await fs.readdir(app.config.logDir)) texts.push(await fs.readFile(join(app.config.logDir, file), 'utf8'));
    for (const file of await fs.readdir(app.config.mcpCacheDir)) texts.push(await fs.readFile(join(app.config.mcpCacheDir, file), 'utf8'));
    const all = texts.join('\n');
    expect(all).toContain('mcp_remote_say_hello');
    expect(all).not.toContain(SECRET);
  });
});
