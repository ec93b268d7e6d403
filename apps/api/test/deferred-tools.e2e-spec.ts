/**
 * Deferred built-in tools through the real gateway, the real registry, the chat's activation set and the fake model
 * (openspec agent-runner "Requirement: Deferred tool view"): `delegate` and `schedule_task` are not offered until the
 * chat activates them, then they are appended after the other tools and stay there on the chat's later turns.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface Body {
  stream?: boolean;
  tools?: Array<{ function: { name: string; description: string } }>;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}
const bodyOf = (r: RecordedRequest): Body => r.body as Body;
const toolsOf = (r: RecordedRequest) => bodyOf(r).tools ?? [];
const toolNames = (r: RecordedRequest) => toolsOf(r).map((tool) => tool.function.name);
/** whether `next`'s tool list starts with `previous`'s, as a provider's prefix cache compares them (as JSON) */
const toolsExtend = (next: RecordedRequest, previous: RecordedRequest) =>
  JSON.stringify(toolsOf(next)).startsWith(JSON.stringify(toolsOf(previous)).slice(0, -1));
const DEFERRED = ['browser', 'delegate', 'schedule_task'];

describe('deferred tools (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { DREAM_INTERVAL: '0' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    // titles and other background calls answer here; the chat's streamed calls take the queue
    fake.setHandler((r) => (bodyOf(r).stream === true ? undefined : { content: 'A title' }));
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });

  /** One turn; returns the chat's own streamed requests (not a sub-agent's), in order. */
  async function turn(chatId: string, text: string, ...steps: Parameters<FakeModelServer['enqueue']>): Promise<RecordedRequest[]> {
    fake.enqueue(...steps);
    const before = fake.completions.length;
    const done = client.next('done', (e) => e.chat_id === chatId, 30_000);
    client.sendMessage(chatId, text);
    await done;
    return fake.completions
      .slice(before)
      .filter((r) => bodyOf(r).stream === true && bodyOf(r).messages.some((m) => m.role === 'user' && m.content === text));
  }

  const activated = async (chatId: string) =>
    Object.keys((JSON.parse(await fs.readFile(join(t.config.memoryDir, chatId, 'metadata.json'), 'utf8')) as { activated_tools?: object }).activated_tools ?? {});

  it('Scenario: a deferred tool is offered once activated, after the others', async () => {
    const chatId = 'deferred-chat-1';
    // the chat already keeps an artifact, so read_artifact is offered from the start (a sub-agent's transcript is one)
    await fs.mkdir(join(t.config.memoryDir, chatId, 'artifacts'), { recursive: true });
    await fs.writeFile(join(t.config.memoryDir, chatId, 'artifacts', 'earlier.txt'), 'an earlier result');
    const [first] = await turn(chatId, 'Hello there', { content: 'Hi.' });
    for (const name of DEFERRED) expect(toolNames(first!)).not.toContain(name);
    const search = toolsOf(first!).find((tool) => tool.function.name === 'tool_search');
    expect(search?.function.description).toMatch(/Built-in tools offered on request .*delegate, schedule_task\.$/u);

    // the model calls delegate by its name: it runs, and the next request offers it after the others
    const delegated = await turn(
      chatId,
      'Count the files',
      { toolCalls: [{ id: 'd1', name: 'delegate', arguments: JSON.stringify({ task: 'count', tools: ['list_dir'] }) }] },
      { content: 'Two files.' },
      { content: 'There are two.' },
    );
    expect(delegated).toHaveLength(2);
    expect(toolNames(delegated[0]!)).toEqual(toolNames(first!));
    expect(toolNames(delegated[1]!)).toEqual([...toolNames(first!), 'delegate']);
    expect(toolsExtend(delegated[1]!, delegated[0]!)).toBe(true);
    const answered = bodyOf(delegated[1]!).messages.find((m) => m.tool_call_id === 'd1');
    expect(answered?.content).toContain('Two files.');
    expect(await activated(chatId)).toEqual(['delegate']);

    // a later turn offers it in the same place; the owner's message naming schedule_task's purpose appends that one
    const [later] = await turn(chatId, 'And now?', { content: 'Nothing new.' });
    expect(toolNames(later!)).toEqual(toolNames(delegated[1]!));
    const [remind] = await turn(chatId, 'Remind me every day at 8', { content: 'Shall I schedule it?' });
    expect(toolNames(remind!)).toEqual([...toolNames(later!), 'schedule_task']);
    expect(toolsExtend(remind!, later!)).toBe(true);
    expect(await activated(chatId)).toEqual(['delegate', 'schedule_task']);

    // another chat has activated nothing
    const [other] = await turn('deferred-chat-2', 'Hello again', { content: 'Hi.' });
    for (const name of DEFERRED) expect(toolNames(other!)).not.toContain(name);
  });

  it("Scenario: tool_search or the owner's message naming a deferred tool activates it", async () => {
    const chatId = 'deferred-chat-3';
    const requests = await turn(
      chatId,
      'Split this work up',
      { toolCalls: [{ id: 's1', name: 'tool_search', arguments: JSON.stringify({ query: 'sub-agent' }) }] },
      { content: 'Found it.' },
    );
    expect(requests).toHaveLength(2);
    expect(toolNames(requests[0]!)).not.toContain('delegate');
    const result = bodyOf(requests[1]!).messages.find((m) => m.tool_call_id === 's1')?.content ?? '';
    expect(result).toContain('**delegate** (built-in): Hand a self-contained task to a sub-agent');
    expect(result).toContain('activated and callable in this chat');
    expect(toolNames(requests[1]!).at(-1)).toBe('delegate');
    expect(toolsExtend(requests[1]!, requests[0]!)).toBe(true);
  });
});
