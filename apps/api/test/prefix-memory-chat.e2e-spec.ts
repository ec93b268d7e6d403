/**
 * The cacheable prefix of a chat that writes long-term memory (openspec agent-runner "Requirement: Tool definitions on
 * a diet" and "Requirement: Cacheable request prefix"): the memory chat of `npm run bench -- prefix`, run in-process
 * against the fake model. Each request is rendered as a provider hashes it for its cache (the tools, then the
 * messages) and compared with the previous request.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEEP_TOOL_RESULTS_TURNS, prunedTurnCount } from '../src/agent/context-window';
import { FakeModelServer, type FakeStep } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const TURNS = 20;

function script(i: number): { content: string; steps: FakeStep[] } {
  const answer = (text: string): FakeStep => ({ content: `${text} (turn ${i}).` });
  const call = (name: string, args: Record<string, unknown>): FakeStep => ({
    toolCalls: [{ id: `call_m${i}_${name}`, name, arguments: JSON.stringify(args) }],
  });
  switch (i % 5) {
    case 0:
      return { content: `Remember that I like topic ${i}.`, steps: [call('save_memory', { content: `The user likes topic ${i}` }), answer('Remembered')] };
    case 2:
      return { content: 'What is in the workspace?', steps: [call('list_dir', { path: '.' }), answer('A notes file')] };
    case 3:
      return { content: 'What is in notes.txt?', steps: [call('read_file', { path: 'notes.txt' }), answer('Benchmark notes')] };
    case 4:
      return { content: 'Where does benchmark occur?', steps: [call('grep', { pattern: 'benchmark', path: '.' }), answer('In notes.txt')] };
    default:
      return { content: `Plain question number ${i}: what do you think?`, steps: [answer('A plain answer')] };
  }
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

describe('prefix of a chat that saves memories', () => {
  let t: TestApp;
  let fake: FakeModelServer;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    await fs.writeFile(join(t.config.workspaceDir, 'notes.txt'), 'benchmark notes\n'.repeat(20));
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('Scenario: in a chat that saves memories only the boundary requests change the start of the request', async () => {
    const client = await WsTestClient.connect(t.wsUrl);
    const chatId = 'prefix-memory-chat';
    const requests: Array<{ turn: number; rendered: Buffer }> = [];
    try {
      for (let turn = 1; turn <= TURNS; turn++) {
        const { content, steps } = script(turn);
        fake.enqueue(...steps);
        const before = fake.completions.length;
        const done = client.next('done', (e) => e.chat_id === chatId);
        client.sendMessage(chatId, content);
        await done;
        for (const request of fake.completions.slice(before)) {
          const body = request.body as { stream?: boolean; tools?: unknown[]; messages?: unknown[] };
          if (body.stream !== true) continue;
          requests.push({ turn, rendered: Buffer.from(JSON.stringify(body.tools ?? []) + JSON.stringify(body.messages ?? [])) });
        }
      }
    } finally {
      await client.close();
    }
    const boundary = (turn: number) =>
      turn === 1 ||
      prunedTurnCount(turn - 1, DEFAULT_KEEP_TOOL_RESULTS_TURNS) !== prunedTurnCount(turn - 2, DEFAULT_KEEP_TOOL_RESULTS_TURNS);
    const broken: number[] = [];
    const shares: number[] = [];
    for (let index = 1; index < requests.length; index++) {
      const previous = requests[index - 1]!;
      const current = requests[index]!;
      const common = commonPrefix(previous.rendered, current.rendered);
      const firstOfTurn = current.turn !== previous.turn;
      if (common < previous.rendered.length - 1) broken.push(current.turn);
      if (!(firstOfTurn && boundary(current.turn))) shares.push(common / current.rendered.length);
    }
    // the saves of turns 5, 10 and 15 change nothing before the conversation: only the boundaries do
    expect(broken).toEqual([12, 20]);
    // every non-boundary request reuses at least 95 % of its bytes: a tool result appended to it is small next to it
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(0.95);
    // the memories reached the model through the conversation, and the snapshot of the boundary took them
    expect(await fs.readFile(join(t.config.memoryDir, 'MEMORY.md'), 'utf8')).toContain('The user likes topic 15');
    const last = requests.at(-1)!.rendered.toString('utf8');
    expect(last).toContain('Remembered information');
    expect(last).toContain('The user likes topic 15');
  });
});
