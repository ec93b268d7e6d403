/**
 * MCP results the model can use, with the third-party server-everything over stdio (built-in catalog entry) and SSE
 * (user entry): images as placeholders or image content, structured content once, resources and resource links,
 * progress events, tool errors, roots and task-only tools (openspec mcp "Requirement: Results the model can use").
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import request from 'supertest';
import type { McpServerResourcesResponse, McpServerToolsResponse, ServerEvent } from '@cashcode/contracts';
import { AgentRunner, type RunRequest } from '../src/agent/agent-runner';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { everythingStdioEntry, startEverythingSse, writeCatalog, type RunningMcpServer } from './support/mcp-test-servers';
import { startTestApp, type TestApp } from './support/test-app';
import { unframed } from './support/untrusted-frame';
import { allowToolsWithoutAsking, configureFakeModel, WsTestClient } from './support/ws-client';

type Part = { type: string; text?: string; image_url?: { url: string } };
interface WireMessage {
  role: string;
  content: string | Part[] | null;
  tool_call_id?: string;
}
interface CompletionBody {
  tools?: Array<{ function: { name: string } }>;
  messages: WireMessage[];
}
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;
/** the tool result's text as the model got it, without the frame of an untrusted source */
const toolMessage = (r: RecordedRequest | undefined, callId: string): string =>
  unframed(bodyOf(r).messages.find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content as string);
const imageParts = (r: RecordedRequest | undefined): Part[] =>
  bodyOf(r).messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((p) => p.type === 'image_url') : []));
/** the start of server-everything's tiny PNG in base64 */
const PNG_BASE64_START = 'iVBORw0KGgo';

describe('MCP results the model can use (e2e)', () => {
  let app: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let sse: RunningMcpServer;
  let catalogDir: string;
  let acceptsImages = false;

  beforeAll(async () => {
    [fake, sse] = await Promise.all([FakeModelServer.start(), startEverythingSse()]);
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-results-'));
    const catalog = writeCatalog(catalogDir, { everything: everythingStdioEntry() });
    app = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    // until the chat computes acceptsImages from the LLM settings, the test sets it on the runner's request
    const runner = app.app.get(AgentRunner);
    const run = runner.run.bind(runner);
    jest.spyOn(runner, 'run').mockImplementation((req: RunRequest) => run({ ...req, acceptsImages }));
    await configureFakeModel(app.httpUrl, fake.baseUrl);
    await allowToolsWithoutAsking(app.httpUrl);
    await request(app.httpUrl)
      .post('/api/mcp/servers')
      .send({ name: 'remote', display_name: 'Everything over SSE', url: sse.url })
      .expect(201);
    client = await WsTestClient.connect(app.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    await Promise.all([fake?.close(), sse?.stop()]);
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    fake.reset();
    acceptsImages = false;
  });

  async function turn(chatId: string, content: string, server = 'everything'): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      // a refused answer to an elicitation is an error of that frame, not of the turn
      client.next('error', (e) => e.chat_id === chatId && e.code !== 'invalid_elicitation'),
    ]);
    client.send({
      type: 'message',
      chat_id: chatId,
      content,
      metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' }, selected_mcp_connectors: [{ server }] },
    });
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  const history = (chatId: string) => fs.readFile(join(app.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  const resultOf = (events: ServerEvent[], callId: string) =>
    events.find((e) => e.event === 'tool_result' && e.call_id === callId) as Extract<ServerEvent, { event: 'tool_result' }>;

  it('Scenario: an image goes to a model without image input as a placeholder, never base64', async () => {
    fake.enqueue({ toolCalls: [{ id: 'img1', name: 'mcp_everything_get-tiny-image', arguments: '{}' }] }, { content: 'seen' });
    const events = await turn('mcp-res-img-a', 'show me the image');
    expect(resultOf(events, 'img1')).toMatchObject({ ok: true });
    const text = toolMessage(fake.requests[1], 'img1');
    expect(text).toMatch(/^Here's the image you requested:\n\[image: image\/png, \d+ (KB|bytes)\]\nThe image above is the MCP logo\.$/u);
    expect(imageParts(fake.requests[1])).toEqual([]);
    expect(JSON.stringify(fake.requests)).not.toContain(PNG_BASE64_START);
    expect(await history('mcp-res-img-a')).not.toContain(PNG_BASE64_START);
  });

  it('Scenario: an image goes to a model that accepts images as image content for that turn only', async () => {
    acceptsImages = true;
    fake.enqueue({ toolCalls: [{ id: 'img2', name: 'mcp_everything_get-tiny-image', arguments: '{}' }] }, { content: 'seen' });
    await turn('mcp-res-img-b', 'show me the image');
    const parts = imageParts(fake.requests[1]);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.image_url!.url.startsWith(`data:image/png;base64,${PNG_BASE64_START}`)).toBe(true);
    // the images follow the tool message as a user message; the tool message itself holds the placeholder
    const messages = bodyOf(fake.requests[1]).messages;
    const toolIndex = messages.findIndex((m) => m.tool_call_id === 'img2');
    expect(messages[toolIndex + 1]?.role).toBe('user');
    expect(toolMessage(fake.requests[1], 'img2')).toContain('[image: image/png, ');
    expect(await history('mcp-res-img-b')).not.toContain(PNG_BASE64_START);
    // a later turn sends the placeholder from history, not the image again
    fake.reset();
    fake.enqueue({ content: 'again' });
    await turn('mcp-res-img-b', 'and now?');
    expect(imageParts(fake.requests[0])).toEqual([]);
    expect(JSON.stringify(fake.requests[0]?.body)).toContain('[image: image/png, ');
  });

  it('Scenario: structured content that the text already carries is sent once', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'sc1', name: 'mcp_everything_get-structured-content', arguments: '{"location":"Chicago"}' }] },
      { content: 'rainy' },
    );
    await turn('mcp-res-sc', 'weather?');
    const text = toolMessage(fake.requests[1], 'sc1');
    expect(JSON.parse(text)).toEqual({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    expect(text).not.toContain('Structured content');
  });

  it('Scenario: resources are listed over REST and resource links are followed with mcp_read_resource', async () => {
    await request(app.httpUrl).post('/api/mcp/servers/everything/connect').expect(200);
    const listed = (await request(app.httpUrl).get('/api/mcp/servers/everything/resources').expect(200)).body as McpServerResourcesResponse;
    expect(listed.status).toBe('connected');
    expect(listed.resources.length).toBeGreaterThan(0);
    expect(listed.resources.every((r) => typeof r.uri === 'string' && typeof r.name === 'string')).toBe(true);
    const doc = listed.resources.find((r) => r.uri.startsWith('demo://resource/static/document/'));
    expect(doc).toBeDefined();

    fake.enqueue(
      { toolCalls: [{ id: 'rl1', name: 'mcp_everything_get-resource-links', arguments: '{"count":2}' }] },
      {
        toolCalls: [
          { id: 'rr1', name: 'mcp_read_resource', arguments: '{"server_name":"everything","uri":"demo://resource/dynamic/text/2"}' },
          { id: 'rr2', name: 'mcp_read_resource', arguments: '{"server_name":"everything","uri":"demo://resource/dynamic/blob/1"}' },
          { id: 'lr1', name: 'mcp_list_resources', arguments: '{"server_name":"everything"}' },
        ],
      },
      { content: 'read' },
    );
    const events = await turn('mcp-res-links', 'follow the links');
    const links = toolMessage(fake.requests[1], 'rl1');
    expect(links).toContain('[resource link: demo://resource/dynamic/blob/1 (Blob Resource 1), text/plain');
    expect(links).toContain('[resource link: demo://resource/dynamic/text/2 (Text Resource 2), text/plain');
    expect(toolMessage(fake.requests[2], 'rr1')).toMatch(/^\[resource: demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\]\n\S/u);
    expect(toolMessage(fake.requests[2], 'rr2')).toMatch(
      /^\[resource: demo:\/\/resource\/dynamic\/blob\/1 \(text\/plain, \d+ bytes\); binary content is not shown\]$/u,
    );
    expect(toolMessage(fake.requests[2], 'lr1')).toContain(`- ${doc!.uri} (`);
    expect(['rr1', 'rr2', 'lr1'].map((id) => resultOf(events, id).ok)).toEqual([true, true, true]);
  });

  it('Scenario: progress notifications reach the client as tool_progress events before the result', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'lro1', name: 'mcp_remote_trigger-long-running-operation', arguments: '{"duration":1,"steps":3}' }] },
      { content: 'finished' },
    );
    const events = await turn('mcp-res-progress', 'run it', 'remote');
    const progress = events.filter((e) => e.event === 'tool_progress');
    // the SDK drops a notification that arrives together with the response, so the last step may be missing
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((e) => [e.call_id, e.tool_name, e.progress, e.total])).toEqual(
      [1, 2, 3].slice(0, progress.length).map((step) => ['lro1', 'mcp_remote_trigger-long-running-operation', step, 3]),
    );
    const resultIndex = events.findIndex((e) => e.event === 'tool_result' && e.call_id === 'lro1');
    expect(events.findIndex((e) => e.event === 'tool_progress')).toBeLessThan(resultIndex);
    expect(resultOf(events, 'lro1')).toMatchObject({ ok: true, result: expect.stringContaining('Long running operation completed') });
  });

  it('Scenario: a tool error reaches the model and the client as a failed call', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'err1', name: 'mcp_remote_get-sum', arguments: '{"a":"one","b":2}' }] },
      { content: 'it failed' },
    );
    const events = await turn('mcp-res-error', 'add', 'remote');
    expect(resultOf(events, 'err1').ok).toBe(false);
    expect(toolMessage(fake.requests[1], 'err1')).toMatch(/^Error: MCP tool 'mcp_remote_get-sum' reported an error: /u);
  });

  it('Scenario: server log notifications go to the server log, not to the model', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'log1', name: 'mcp_remote_toggle-simulated-logging', arguments: '{}' }] },
      { content: 'logging' },
    );
    await turn('mcp-res-log', 'log something', 'remote');
    const file = join(app.config.logDir, 'cashcode.log');
    let line: string | undefined;
    for (let i = 0; i < 200 && !line; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const text = await fs.readFile(file, 'utf8').catch(() => '');
      line = text.split('\n').find((l) => l.includes('event=mcp.server.log') && l.includes('server="remote"') && l.includes('SessionId'));
    }
    expect(line).toMatch(/level="\w+" message="[^"]+ - SessionId /u);
    // log messages reach neither the model nor the client
    expect(JSON.stringify(fake.requests)).not.toContain('mcp.server.log');
  });

  it('Scenario: the agent workspace is the single root the server gets from roots/list', async () => {
    fake.enqueue({ toolCalls: [{ id: 'roots1', name: 'mcp_everything_get-roots-list', arguments: '{}' }] }, { content: 'ok' });
    await turn('mcp-res-roots', 'roots?');
    const text = toolMessage(fake.requests[1], 'roots1');
    expect(text).toContain('Current MCP Roots (1 total)');
    // the data directory is redacted in everything a server returns: the root is file://<data dir>/workspace
    expect(pathToFileURL(app.config.workspaceDir).href).toBe(`${pathToFileURL(app.dataDir).href}/workspace`);
    expect(text).toContain('1. workspace\n   URI: file://<data>/workspace\n');
  });

  it('Scenario: a tool that requires task execution is not offered and the tools list says why', async () => {
    await request(app.httpUrl).post('/api/mcp/servers/everything/connect').expect(200);
    const tools = (await request(app.httpUrl).get('/api/mcp/servers/everything/tools').expect(200)).body as McpServerToolsResponse;
    const research = tools.tools.find((t) => t.original_name === 'simulate-research-query');
    expect(research).toMatchObject({ callable: false, unavailable_reason: 'task_required' });
    expect(tools.tools.find((t) => t.original_name === 'echo')).toMatchObject({ callable: true });
    fake.enqueue({ content: 'hi' });
    await turn('mcp-res-task', 'hello');
    const offered = (bodyOf(fake.requests[0]).tools ?? []).map((t) => t.function.name);
    expect(offered).toContain('mcp_everything_echo');
    expect(offered.some((name) => name.includes('simulate-research-query'))).toBe(false);
  });

  async function elicitationTurn(chatId: string, server: string, answer: (id: string) => void): Promise<ServerEvent[]> {
    fake.enqueue(
      { toolCalls: [{ id: `el-${chatId}`, name: `mcp_${server}_trigger-elicitation-request`, arguments: '{}' }] },
      { content: 'thanks' },
    );
    const asked = client.next('elicitation_request', (e) => e.chat_id === chatId);
    const events = turn(chatId, 'ask me', server);
    const request = await asked;
    expect(request).toMatchObject({ call_id: `el-${chatId}`, server, message: 'Please provide inputs for the following fields:' });
    expect(request.requested_schema).toMatchObject({ type: 'object', required: ['name'] });
    answer(request.elicitation_id);
    return events;
  }

  it('Scenario: an accepted elicitation form answers the server, after a refused invalid answer', async () => {
    const chatId = 'mcp-res-elicit-accept';
    const events = await elicitationTurn(chatId, 'everything', (id) => {
      const refused = client.next('error', (e) => e.chat_id === chatId);
      client.send({ type: 'elicitation', chat_id: chatId, elicitation_id: id, action: 'accept', content: { name: 'Cash', integer: 500 } });
      void refused.then((error) => {
        expect(error).toMatchObject({ code: 'invalid_elicitation', detail: expect.stringContaining('integer must be at most 100') });
        client.send({ type: 'elicitation', chat_id: chatId, elicitation_id: id, action: 'accept', content: { name: 'Cash', check: true } });
      });
    });
    expect(events.find((e) => e.event === 'elicitation_resolved')).toMatchObject({ action: 'accept' });
    const text = toolMessage(fake.requests[1], `el-${chatId}`);
    expect(text).toContain('User provided the requested information!');
    expect(text).toContain('- Name: Cash\n- Agreed to terms: true');
  });

  it('Scenario: a declined elicitation over SSE tells the server the user declined', async () => {
    const chatId = 'mcp-res-elicit-decline';
    const events = await elicitationTurn(chatId, 'remote', (id) =>
      client.send({ type: 'elicitation', chat_id: chatId, elicitation_id: id, action: 'decline' }),
    );
    expect(events.find((e) => e.event === 'elicitation_resolved')).toMatchObject({ action: 'decline' });
    expect(toolMessage(fake.requests[1], `el-${chatId}`)).toContain('User declined to provide the requested information.');
  });
});
