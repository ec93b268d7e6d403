/**
 * What a `delegate` call costs the server (openspec subagents): a real server process against the fake model. Two
 * kinds of turns alternate — one whose model calls `delegate` with a trivial child (one model call, no tools), one
 * whose model calls `list_dir` instead — and each turn's overhead is its time minus raw `openai` SDK calls replaying
 * exactly the requests the server sent for it (drift of the machine cancels out). The delegation's own server work is
 * the delegate turn's median overhead minus the list_dir turn's: the child's run, its events and its transcript.
 */
import OpenAI from 'openai';
import type { FakeStep, RecordedRequest } from '../apps/api/test/support/fake-model-server';
import { FakeModelServer } from '../apps/api/test/support/fake-model-server';
import { BenchClient, configure, startServer, type Figure } from './server-bench';

const TARGET_MS = 10;

type Streaming = OpenAI.Chat.ChatCompletionCreateParamsStreaming;
interface Body {
  stream?: boolean;
  messages?: Array<{ role: string; content: unknown }>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The parent asks for its tool once, then answers; a child answers at once. */
function answer(request: RecordedRequest): FakeStep {
  const body = request.body as Body;
  if (!body.stream) return { content: 'The user ran benchmark turns.' };
  const messages = body.messages ?? [];
  if (String(messages[0]?.content ?? '').includes('## Sub-agent')) return { content: 'Child answer.' };
  // this turn's part of the chat: from its user message on
  const userAt = messages.map((message) => message.role).lastIndexOf('user');
  if (messages.slice(userAt).some((message) => message.role === 'tool')) return { content: 'Parent answer.' };
  return String(messages[userAt]?.content ?? '').startsWith('delegate')
    ? { toolCalls: [{ name: 'delegate', arguments: JSON.stringify({ task: 'Say hello.', tools: [] }) }] }
    : { toolCalls: [{ name: 'list_dir', arguments: '{}' }] };
}

export async function runSubagentBench(log: (line: string) => void): Promise<Figure[]> {
  const fake = await FakeModelServer.start();
  fake.setHandler(answer);
  const raw = new OpenAI({ baseURL: fake.baseUrl, apiKey: 'bench-key', maxRetries: 0 });
  const server = await startServer();
  const turns = Number(process.env['CASHCODE_BENCH_DELEGATE_TURNS'] ?? 100);
  try {
    await configure(server, fake);
    const client = await BenchClient.connect(server.wsUrl);
    const overheads: Record<'delegate' | 'list_dir', number[]> = { delegate: [], list_dir: [] };
    const run = async (kind: 'delegate' | 'list_dir', i: number, measure: boolean) => {
      fake.requests.length = 0;
      const turn = await client.turn(`${kind} ${i}`);
      if (turn.error) throw new Error(`${kind} turn failed: ${turn.error}`);
      const requests = fake.completions.filter((record) => (record.body as Body | null)?.stream === true);
      const expected = kind === 'delegate' ? 3 : 2;
      if (requests.length !== expected) throw new Error(`${kind} turn made ${requests.length} model calls, expected ${expected}`);
      const started = performance.now();
      for (const request of requests) {
        const stream = await raw.chat.completions.create(request.body as Streaming);
        for await (const chunk of stream) void chunk;
      }
      if (measure) overheads[kind].push(turn.ms - (performance.now() - started));
    };
    for (let i = 0; i < 20; i++) {
      await run('delegate', i, false);
      await run('list_dir', i, false);
    }
    for (let i = 0; i < turns; i++) {
      await run('delegate', i, true);
      await run('list_dir', i, true);
    }
    client.close();
    const delegate = median(overheads.delegate);
    const listDir = median(overheads.list_dir);
    const added = delegate - listDir;
    log(`delegate: turn overhead ${delegate.toFixed(2)} ms, list_dir turn ${listDir.toFixed(2)} ms, delegation adds ${added.toFixed(2)} ms`);
    return [
      { name: 'turn with a delegate call (trivial child): median server overhead', value: delegate, unit: 'ms' },
      { name: 'turn with a list_dir call: median server overhead', value: listDir, unit: 'ms' },
      { name: 'server work a delegate call adds (trivial child)', value: added, unit: 'ms', target: `≤ ${TARGET_MS} ms`, pass: added <= TARGET_MS },
    ];
  } finally {
    await server.stop();
    await fake.close();
  }
}
