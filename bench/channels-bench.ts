/**
 * `npm run bench -- channels`: the server work one Telegram turn adds over the same turn on the WebSocket chat. One
 * real server process polls the local Bot API stand-in (apps/api/test/support/fake-telegram-server.ts) and answers
 * with the fake model; the bench pairs the owner, then runs WebSocket turns and Telegram turns (same text, same
 * answer) in alternating batches and reads the server process's CPU time (/proc, user + system) around each batch.
 * The figure is (CPU of the Telegram batches − CPU of the WS batches) / turns: what receiving the update, pairing
 * check, conversation lookup, rendering, sendMessage/editMessageText and the offset write cost per turn. The wall
 * time from the update to the final edit is reported too (it includes the long poll's wake-up and two Bot API round
 * trips, not server work).
 *
 * Goal: ≤ 5 ms of added server CPU per Telegram turn.
 */
import { readFile } from 'node:fs/promises';
import { FakeModelServer } from '../apps/api/test/support/fake-model-server';
import { FakeTelegramServer } from '../apps/api/test/support/fake-telegram-server';
import { BenchClient, configure, startServer, type Figure } from './server-bench';

const OWNER = { id: 4242, first_name: 'Bench' };
const BATCH = 10;
const BATCHES = 8;

async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function until<T>(probe: () => T | null | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('channels bench: timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function put(url: string, body: unknown, method = 'PUT'): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url} → ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

export async function runChannelsBench(log: (line: string) => void): Promise<Figure[]> {
  const fake = await FakeModelServer.start();
  const answer = 'The **quick** brown fox jumps over the lazy dog. '.repeat(4).trim();
  fake.setHandler((request) => ((request.body as { stream?: boolean } | null)?.stream ? { content: answer } : { content: 'Benchmark turns.' }));
  const tg = await FakeTelegramServer.start();
  const server = await startServer({ CASHCODE_TELEGRAM_API_ROOT: tg.baseUrl });
  const pid = server.child.pid!;
  try {
    await configure(server, fake);
    await put(`${server.httpUrl}/api/channels/telegram`, {
      enabled: true,
      token: tg.validToken,
      model: { provider: 'openai_compatible', model: 'fake-model' },
    });
    // pair the owner
    tg.queueMessage({ from: OWNER, text: 'hello' });
    const codeMessage = await until(() => tg.messagesIn(OWNER.id)[0]);
    const code = /Pairing code: ([A-Z0-9]+)/.exec(FakeTelegramServer.visible(codeMessage))![1]!;
    await put(`${server.httpUrl}/api/channels/telegram/pairings/${code}/approve`, undefined, 'POST');
    await until(() => tg.messagesIn(OWNER.id)[1]);
    const ws = await BenchClient.connect(server.wsUrl);
    const expected = answer.replace(/\*\*/g, '');

    const telegramTurn = async (): Promise<number> => {
      const before = tg.messagesIn(OWNER.id).length;
      const started = performance.now();
      tg.queueMessage({ from: OWNER, text: 'Tell me about the fox.' });
      await until(() => {
        const message = tg.messagesIn(OWNER.id)[before];
        return message && FakeTelegramServer.visible(message).trim() === expected ? message : null;
      });
      return performance.now() - started;
    };
    const wsTurn = async (): Promise<number> => {
      const result = await ws.turn('Tell me about the fox.');
      if (result.error) throw new Error(result.error);
      return result.ms;
    };

    // warm-up of both paths
    for (let i = 0; i < 5; i++) {
      await wsTurn();
      await telegramTurn();
    }
    const cpu = { ws: 0, telegram: 0 };
    const wall = { ws: [] as number[], telegram: [] as number[] };
    for (let batch = 0; batch < BATCHES; batch++) {
      for (const kind of batch % 2 === 0 ? (['ws', 'telegram'] as const) : (['telegram', 'ws'] as const)) {
        const start = await cpuMs(pid);
        for (let i = 0; i < BATCH; i++) wall[kind].push(kind === 'ws' ? await wsTurn() : await telegramTurn());
        // let the turn's follow-up work (persisting, the offset write) finish inside the measured window
        await new Promise((resolve) => setTimeout(resolve, 50));
        cpu[kind] += (await cpuMs(pid)) - start;
      }
    }
    ws.close();
    const turns = BATCH * BATCHES;
    const added = (cpu.telegram - cpu.ws) / turns;
    log(`channels: server CPU per turn ws ${(cpu.ws / turns).toFixed(2)} ms, telegram ${(cpu.telegram / turns).toFixed(2)} ms`);
    return [
      { name: 'server CPU per WS turn', value: cpu.ws / turns, unit: 'ms' },
      { name: 'server CPU per Telegram turn', value: cpu.telegram / turns, unit: 'ms' },
      { name: 'added server CPU per Telegram turn', value: added, unit: 'ms', target: '≤ 5 ms', pass: added <= 5 },
      { name: 'Telegram turn, update → final edit (median wall)', value: median(wall.telegram), unit: 'ms' },
      { name: 'WS turn (median wall)', value: median(wall.ws), unit: 'ms' },
    ];
  } finally {
    await server.stop();
    await tg.close();
    await fake.close();
  }
}
