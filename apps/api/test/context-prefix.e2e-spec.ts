/**
 * The cacheable request prefix and the pruning of old tool results through the real gateway, the real read_file tool,
 * a real Dream run and the fake model (openspec agent-runner "Requirement: Cacheable request prefix" and "Requirement:
 * Old tool results pruned from the context"). CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS is 0 here, so the first context
 * boundary after the chat's first turn comes after CONTEXT_BOUNDARY_TURNS turns.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { CONTEXT_BOUNDARY_TURNS } from '../src/agent/context-window';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface Body {
  stream?: boolean;
  tools?: unknown[];
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}
const bodyOf = (r: RecordedRequest): Body => r.body as Body;
/** the prompt as a provider renders it for its prefix cache: tools, then the messages in order */
const rendered = (r: RecordedRequest) => JSON.stringify(bodyOf(r).tools ?? []) + JSON.stringify(bodyOf(r).messages);
/** whether `next` is `previous` with messages appended (the previous rendering without its closing bracket) */
const appendsTo = (next: RecordedRequest, previous: RecordedRequest) => rendered(next).startsWith(rendered(previous).slice(0, -1));
const NOTES = `${'These are the project notes. '.repeat(20)}\n`;

describe('cacheable request prefix (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  const chatId = 'prefix-chat-1';
  /** every streamed (chat) request of prefix-chat-1, in order */
  const chatRequests: RecordedRequest[] = [];
  let turns = 0;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS: '0', DREAM_INTERVAL: '0' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    await fs.writeFile(join(t.config.workspaceDir, 'notes.txt'), NOTES);
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });

  /** One turn of the chat: a read_file round, then an answer. */
  async function turn(chat = chatId): Promise<RecordedRequest[]> {
    const n = ++turns;
    fake.enqueue({ toolCalls: [{ id: `call_notes_${n}`, name: 'read_file', arguments: '{"path":"notes.txt"}' }] }, { content: `Answer ${n}.` });
    const before = fake.completions.length;
    const done = client.next('done', (e) => e.chat_id === chat);
    client.sendMessage(chat, `Question ${n}: what do the notes say?`);
    await done;
    const made = fake.completions.slice(before).filter((r) => bodyOf(r).stream === true);
    if (chat === chatId) chatRequests.push(...made);
    return made;
  }

  it("Scenario: each request of a chat starts with the previous request's bytes, across a Dream run", async () => {
    fake.setHandler((r) => {
      if (bodyOf(r).stream === true) return undefined;
      const system = bodyOf(r).messages[0]?.content ?? '';
      return { content: system.startsWith('You edit MEMORY.md') ? '# Facts\n- The user keeps project notes\n' : '## New facts\n- notes' };
    });
    await turn();
    await turn();
    const dream = await request(t.httpUrl).post('/api/memory/dream').expect(200);
    expect(dream.body.run.outcome).toBe('updated');
    await turn();
    await turn();
    for (let i = 1; i < chatRequests.length; i++) {
      expect(appendsTo(chatRequests[i]!, chatRequests[i - 1]!)).toBe(true);
    }
    // the Dream rewrite has not reached the running chat; a new chat has it at once
    const system = bodyOf(chatRequests.at(-1)!).messages[0]?.content ?? '';
    expect(system).toBe(bodyOf(chatRequests[0]!).messages[0]?.content);
    expect(system).not.toContain('The user keeps project notes');
    const other = await turn('prefix-chat-2');
    expect(bodyOf(other[0]!).messages[0]?.content).toContain('## Remembered information\n# Facts\n- The user keeps project notes');
  });

  it('Scenario: at a context boundary old tool results are stubbed in the model request and stay whole in the history', async () => {
    while (chatRequests.filter((r) => bodyOf(r).messages.at(-1)?.role === 'user').length < CONTEXT_BOUNDARY_TURNS) await turn();
    const beforeBoundary = chatRequests.at(-1)!;
    const [first, second] = await turn();
    const messages = bodyOf(first!).messages;
    const tools = messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(CONTEXT_BOUNDARY_TURNS);
    for (const tool of tools) {
      expect(tool.content).toMatch(/^\[tool result of read_file pruned from the context; [\d,]+ characters; it is kept in the chat history/);
    }
    // every assistant tool call still has its tool message
    const answered = new Set(tools.map((m) => m.tool_call_id));
    const calls = messages.flatMap((m) => ((m as { tool_calls?: Array<{ id: string }> }).tool_calls ?? []).map((c) => c.id));
    expect(calls).toHaveLength(CONTEXT_BOUNDARY_TURNS);
    for (const id of calls) expect(answered.has(id)).toBe(true);
    // the boundary is where the new MEMORY.md reaches the chat
    expect(messages[0]?.content).toContain('- The user keeps project notes');
    expect(appendsTo(first!, beforeBoundary)).toBe(false);
    // this turn's own result is whole, and the next request starts with this one
    expect(bodyOf(second!).messages.at(-1)?.content).toContain('These are the project notes.');
    const [next] = await turn();
    expect(appendsTo(next!, second!)).toBe(true);
    // the history on disk keeps every result whole
    const history = (await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { role: string; content: string });
    const results = history.filter((r) => r.role === 'tool');
    expect(results.length).toBe(CONTEXT_BOUNDARY_TURNS + 2);
    for (const result of results) expect(result.content).toContain('These are the project notes.');
  });
});
