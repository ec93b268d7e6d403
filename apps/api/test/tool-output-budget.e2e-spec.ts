/**
 * The tool-output budget through the real gateway, the real read_file tool and the fake model (openspec agent-runner
 * "Requirement: Tool output budget"): a large result is kept whole as an artifact of the chat, the model and the
 * history get a preview, and read_artifact pages through it.
 */
import { promises as fs, statSync } from 'node:fs';
import { join } from 'node:path';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

type Message = { role: string; content: string | null; tool_call_id?: string };
const messagesOf = (r: RecordedRequest | undefined): Message[] => (r?.body as { messages: Message[] }).messages;

describe('tool output budget (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });

  beforeEach(() => fake.reset());

  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });

  it('Scenario: rarely used tools are offered only once they apply to the chat', async () => {
    const chatId = 'budget-chat-tools';
    await fs.writeFile(join(t.config.workspaceDir, 'large.txt'), Array.from({ length: 3000 }, (_, i) => `row ${i} ${'y'.repeat(30)}`).join('\n'));
    fake.enqueue(
      { content: 'hello' },
      { toolCalls: [{ id: 'call_large', name: 'read_file', arguments: '{"path":"large.txt"}' }] },
      { content: 'read it' },
    );
    for (const content of ['hi', 'read large.txt']) {
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, content);
      await done;
    }
    const names = (r: RecordedRequest | undefined) =>
      ((r?.body as { tools?: Array<{ function: { name: string } }> } | undefined)?.tools ?? []).map((tool) => tool.function.name);
    const rare = ['read_artifact', 'mcp_list_resources', 'mcp_read_resource', 'skill_read_resource'];
    // no artifact, no MCP server used, no Skill loaded: none of them is offered
    for (const request of fake.completions.slice(0, 2)) for (const name of rare) expect(names(request)).not.toContain(name);
    expect(names(fake.completions[0])).toContain('read_file');
    // the result was kept as an artifact: from the next request on, read_artifact is offered (the others still not)
    expect(names(fake.completions[2])).toContain('read_artifact');
    expect(names(fake.completions[2]).filter((name) => rare.includes(name))).toEqual(['read_artifact']);
  });

  it('Scenario: a large tool result is kept as an artifact and the model gets a preview it can page through', async () => {
    const chatId = 'budget-chat-1';
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(30)}`);
    const text = lines.join('\n');
    await fs.writeFile(join(t.config.workspaceDir, 'big.txt'), text);
    fake.enqueue(
      { toolCalls: [{ id: 'call_big', name: 'read_file', arguments: '{"path":"big.txt"}' }] },
      { toolCalls: [{ id: 'call_more', name: 'read_artifact', arguments: '{"id":"call_big","offset":3000,"length":500}' }] },
      { content: 'read it' },
    );
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'read big.txt');
    await done;

    // the artifact holds the whole result, private to the server's user
    const artifact = join(t.config.memoryDir, chatId, 'artifacts', 'call_big.txt');
    const whole = await fs.readFile(artifact, 'utf8');
    // read_file shows 500 lines (about 20,000 characters), over the 8,000-character budget
    expect(whole.length).toBeGreaterThan(18_000);
    expect(whole).toContain('line 0499');
    expect(statSync(artifact).mode & 0o777).toBe(0o600);

    // the second model call got a preview: head, tail, the artifact id and how to read more
    const toolMessage = messagesOf(fake.completions[1]).find((m) => m.role === 'tool' && m.tool_call_id === 'call_big');
    const preview = toolMessage?.content ?? '';
    expect(preview.length).toBeLessThan(5_000);
    expect(preview).toContain('line 0000');
    expect(preview).toContain('Call read_file with offset=501 to continue.');
    expect(preview).toContain('artifact "call_big"');
    expect(preview).toContain('read_artifact');
    expect(preview).not.toContain('line 0250');

    // read_artifact returned the requested characters of the whole text
    const paged = messagesOf(fake.completions[2]).find((m) => m.role === 'tool' && m.tool_call_id === 'call_more')?.content ?? '';
    expect(paged).toContain(`characters 3000–3500 of ${Array.from(whole).length}`);
    expect(paged.endsWith(Array.from(whole).slice(3000, 3500).join(''))).toBe(true);

    // the history keeps the preview (the handle), not a second copy of the result
    const history = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
    expect(history.length).toBeLessThan(12_000);
    expect(history).toContain('artifact \\"call_big\\"');
  });

  it('Scenario: read_artifact refuses an unknown id and an id that is not a plain name', async () => {
    const chatId = 'budget-chat-2';
    fake.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'read_artifact', arguments: '{"id":"nope"}' },
          { id: 'c2', name: 'read_artifact', arguments: '{"id":"../budget-chat-1/artifacts/call_big"}' },
        ],
      },
      { content: 'ok' },
    );
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'read artifacts');
    await done;
    const tools = messagesOf(fake.completions[1]).filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual([
      expect.stringContaining('Error: no artifact "nope" in this chat'),
      expect.stringContaining('Error: no artifact "../budget-chat-1/artifacts/call_big" in this chat'),
    ]);
  });
});
