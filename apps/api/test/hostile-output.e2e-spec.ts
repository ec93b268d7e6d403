/**
 * Text the server does not control, through a real turn: the fake model writes ~1 MiB of adversarial text (its tool
 * arguments go through the argument preview), `exec` prints it back (its output goes through the redactor) and
 * `web_fetch` reads it from a local page (the text tidy), while `GET /api/health` is polled every 50 ms. The turn must
 * complete, every poll be answered, and the event loop never be held for long: the old passes held it for minutes.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { allowToolsWithoutAsking, configureFakeModel, WsTestClient } from './support/ws-client';

type ToolResultEvent = Extract<ServerEvent, { event: 'tool_result' }>;
type ToolCallEvent = Extract<ServerEvent, { event: 'tool_call' }>;

const MiB = 1024 * 1024;
/** generous for a loaded 2-core machine (the linear passes take tens of milliseconds on 1 MiB) */
const MAX_HEALTH_GAP_MS = 1500;

function fill(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/** ~1 MiB: the repetitions that made some pass of the old code super-linear, one after the other. */
const HOSTILE = [
  fill('"secret":"', 200_000),
  fill("'secret'='", 150_000),
  fill('password="\\', 100_000),
  `password:${fill(' ', 150_000)}x`,
  fill('Bearer ', 100_000),
  fill('\r\n', 150_000),
  fill('x-api-key-secret-password', 100_000),
  fill(' \t', 100_000),
].join('\n');

/** GET /api/health every 50 ms until stopped; the times (ms) at which each answer arrived, and the failures. */
function pollHealth(httpUrl: string): { stop(): Promise<{ answers: number[]; failures: string[]; sent: number }> } {
  const answers: number[] = [];
  const failures: string[] = [];
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let stopped = false;
  const start = performance.now();
  answers.push(0);
  const tick = () => {
    if (stopped) return;
    sent++;
    const request = fetch(`${httpUrl}/api/health`)
      .then(async (response) => {
        await response.text();
        if (response.status === 200) answers.push(performance.now() - start);
        else failures.push(`status ${response.status}`);
      })
      .catch((error: unknown) => {
        failures.push(String(error));
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
    timer = setTimeout(tick, 50);
  };
  let timer = setTimeout(tick, 50);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([...inFlight]);
      answers.push(performance.now() - start);
      return { answers: answers.sort((a, b) => a - b), failures, sent };
    },
  };
}

function largestGap(times: number[]): number {
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
  return gap;
}

describe('hostile tool output through a turn', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let page: http.Server;
  let pageUrl: string;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_FETCH_ALLOW_PRIVATE: 'true' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    await allowToolsWithoutAsking(t.httpUrl);
    page = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(HOSTILE);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/hostile.txt`;
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
    await t?.close();
    await fake?.close();
  });

  it('Scenario: a turn whose tools return 1 MiB of adversarial text never blocks the server', async () => {
    expect(HOSTILE.length).toBeGreaterThan(MiB);
    const chatId = 'hostile-output-1';
    fake.enqueue(
      {
        toolCalls: [{ id: 'w1', name: 'write_file', arguments: JSON.stringify({ path: 'hostile.txt', content: HOSTILE }) }],
        argumentChunkChars: 64 * 1024,
      },
      {
        toolCalls: [
          { id: 'x1', name: 'exec', arguments: JSON.stringify({ command: 'cat hostile.txt; cat hostile.txt >&2' }) },
          { id: 'f1', name: 'web_fetch', arguments: JSON.stringify({ url: pageUrl }) },
        ],
      },
      { content: 'Read it all.' },
    );
    const poll = pollHealth(t.httpUrl);
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId, 90_000),
      client.next('error', (e) => e.chat_id === chatId, 90_000),
    ]);
    client.sendMessage(chatId, 'write, print and fetch the hostile text');
    await end;
    const { answers, failures, sent } = await poll.stop();

    const events = client.chatEvents(chatId);
    expect(events.at(-1)?.event).toBe('done');
    const results = events.filter((e) => e.event === 'tool_result') as ToolResultEvent[];
    expect(results.map((r) => [r.call_id, r.ok]).sort()).toEqual([['f1', true], ['w1', true], ['x1', true]]);
    // the argument preview of the 1 MiB write_file call (redacted as a whole, then cut) is bounded
    const preview = (events.find((e) => e.event === 'tool_call' && e.call_id === 'w1') as ToolCallEvent | undefined)?.arguments ?? '';
    expect([...preview].length).toBe(500);
    expect(preview).toMatch(/^\{"path":"hostile\.txt","content":"\\"secret\\":\\"/);
    // what the model read back: the exec output redacted, the page tidied (no CR left)
    const tools = (fake.completions[2]?.body as { messages: Array<{ role: string; tool_call_id?: string; content: string }> }).messages.filter(
      (m) => m.role === 'tool',
    );
    const execOutput = tools.find((m) => m.tool_call_id === 'x1')?.content ?? '';
    expect(execOutput).toContain('"secret":"[redacted]"');
    expect(execOutput).not.toMatch(/"secret":"secret"/);
    expect(tools.find((m) => m.tool_call_id === 'f1')?.content ?? '').not.toContain('\r');

    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(0);
    expect(answers.length).toBe(sent + 2);
    expect({ largestGapUnderBound: largestGap(answers) < MAX_HEALTH_GAP_MS, gap: Math.round(largestGap(answers)) }).toMatchObject({
      largestGapUnderBound: true,
    });
  }, 120_000);
});
