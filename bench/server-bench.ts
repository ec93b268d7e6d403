/**
 * End-to-end benchmarks of a real CashCode server process (apps/api/dist/main.js) against the fake model server:
 * start-to-healthy, per-turn overhead (plain and with 2 tool calls) as a ratio to raw `openai` SDK calls made in this
 * same process, first chunk → first delta, throughput with 100 concurrent chats, RSS idle and after load, and the
 * parallel speed-up of 4 concurrent web_fetch calls against a slow local page.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { FakeModelServer, type FakeStep, type RecordedRequest } from '../apps/api/test/support/fake-model-server';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  target?: string;
  pass?: boolean;
  note?: string;
}

/** compiled to bench/dist/bench/*.js */
const ROOT = join(__dirname, '..', '..', '..');
/**
 * The server build to measure: apps/api/dist, or CASHCODE_BENCH_API_DIST (another build's directory, for A/B runs
 * that alternate two builds of the server in one session).
 */
const API_DIST = process.env['CASHCODE_BENCH_API_DIST'] ?? join(ROOT, 'apps', 'api', 'dist');

/**
 * Each turn's overhead: its time minus the time of the raw SDK calls that replayed that turn's requests right after
 * it. Pairing them cancels the machine's drift (a small VM's speed wanders by tens of percent within minutes), which
 * a difference of two separate medians does not.
 */
function overheads(turns: readonly number[], raws: readonly number[]): number[] {
  return turns.map((turn, i) => turn - raws[i]!);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** CPU time (user + system) the process has used so far, in ms (Linux /proc; clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command name, which is in parentheses and may contain spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/** A WebSocket client that runs turns and timestamps events. */
export class BenchClient {
  private constructor(
    private readonly ws: WebSocket,
    readonly chatId: string,
  ) {}
  private listeners = new Set<(event: Record<string, unknown>, at: number) => void>();

  static async connect(url: string): Promise<BenchClient> {
    const ws = new WebSocket(url);
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
      ws.once('error', reject);
    });
    const client = new BenchClient(ws, String(ready['chat_id']));
    ws.on('message', (data) => {
      const at = performance.now();
      const event = JSON.parse(String(data)) as Record<string, unknown>;
      for (const listener of client.listeners) listener(event, at);
    });
    return client;
  }

  /** Sends one message and resolves when the turn is done: { ms, firstDeltaAt, error }. */
  turn(content: string, model = 'fake-model'): Promise<{ ms: number; firstDeltaAt: number | null; deltas: number; error: string | null }> {
    return new Promise((resolve) => {
      const started = performance.now();
      let firstDeltaAt: number | null = null;
      let deltas = 0;
      const listener = (event: Record<string, unknown>, at: number) => {
        if (event['chat_id'] !== this.chatId) return;
        if (event['event'] === 'delta') {
          deltas++;
          firstDeltaAt ??= at;
        }
        if (event['event'] === 'done' || event['event'] === 'error') {
          this.listeners.delete(listener);
          resolve({
            ms: at - started,
            firstDeltaAt,
            deltas,
            error: event['event'] === 'error' ? String(event['detail']) : null,
          });
        }
      };
      this.listeners.add(listener);
      this.ws.send(
        JSON.stringify({
          type: 'message',
          chat_id: this.chatId,
          content,
          metadata: { llm: { provider: 'openai_compatible', model } },
        }),
      );
    });
  }

  close(): void {
    this.ws.close();
  }
}

export interface RunningServer {
  child: ChildProcess;
  httpUrl: string;
  wsUrl: string;
  startToHealthyMs: number;
  dirs: string[];
  stop(): Promise<void>;
}

export async function startServer(extraEnv: Record<string, string> = {}, nodeArgs: string[] = []): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cashcode-bench-data-'));
  const configDir = await mkdtemp(join(tmpdir(), 'cashcode-bench-config-'));
  await mkdir(join(dataDir, 'workspace'), { recursive: true });
  await writeFile(join(dataDir, 'workspace', 'notes.txt'), 'benchmark notes\n'.repeat(20));
  const port = await freePort();
  const wsPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, join(API_DIST, 'main.js')], {
    env: {
      // as `npm start` runs it (scripts/start.mjs)
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '32768',
      ...process.env,
      CASHCODE_DATA_DIR: dataDir,
      CASHCODE_CONFIG_DIR: configDir,
      CASHCODE_PORT: String(port),
      WS_PORT: String(wsPort),
      CASHCODE_CONSOLE_LOG_LEVEL: 'warn',
      // no model-written titles: a turn is measured without the title call after it
      CASHCODE_MODEL_TITLES: 'false',
      CASHCODE_FILE_LOG_LEVEL: 'info',
      // the bench measures turns, not authentication: its clients send no credential
      CASHCODE_AUTH: 'off',
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const httpUrl = `http://127.0.0.1:${port}`;
  let healthyAt = 0;
  for (let attempt = 0; attempt < 2000 && !healthyAt; attempt++) {
    try {
      const response = await fetch(`${httpUrl}/api/health`);
      if (response.ok) healthyAt = performance.now();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
  }
  if (!healthyAt) throw new Error('server did not become healthy');
  const dirs = [dataDir, configDir];
  return {
    child,
    httpUrl,
    wsUrl: `ws://127.0.0.1:${wsPort}/`,
    startToHealthyMs: healthyAt - started,
    dirs,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function configure(server: RunningServer, fake: FakeModelServer): Promise<void> {
  const response = await fetch(`${server.httpUrl}/api/settings/llm`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ openai_compatible: { base_url: fake.baseUrl, api_key: 'bench-key' }, ollama: { base_url: '' } }),
  });
  if (!response.ok) throw new Error(`configure failed: ${response.status} ${await response.text()}`);
}

type Streaming = OpenAI.Chat.ChatCompletionCreateParamsStreaming;

const HELLO: Streaming = {
  model: 'fake-model',
  messages: [{ role: 'user', content: 'hello' }],
  stream: true,
  stream_options: { include_usage: true },
};

/** One streamed raw `openai` SDK call, read to the end; `body` is replayed as is (default: a one-line "hello"). */
async function rawCall(client: OpenAI, body: Streaming = HELLO): Promise<void> {
  const stream = await client.chat.completions.create(body);
  for await (const chunk of stream) void chunk;
}

/** The streamed chat-completion requests the fake model received since it was last cleared (a turn's model calls). */
function turnRequests(fake: FakeModelServer): RecordedRequest[] {
  return fake.completions.filter((record) => (record.body as { stream?: boolean } | null)?.stream === true);
}

/**
 * Answers like a model: the background, non-streamed requests (the consolidator's summary, Dream) get a short summary,
 * so a long benchmark chat is compressed as it would be with a real model; streamed turn requests go to `turn`.
 */
function modelHandler(turn: (request: RecordedRequest) => FakeStep): (request: RecordedRequest) => FakeStep {
  return (request) => ((request.body as { stream?: boolean } | null)?.stream ? turn(request) : { content: 'The user ran benchmark turns.' });
}

async function slowPageServer(delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Slow page</h1><p>Some content to read.</p></body></html>');
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function runServerBench(log: (line: string) => void): Promise<Figure[]> {
  const figures: Figure[] = [];
  const fake = await FakeModelServer.start();
  const content = 'The quick brown fox jumps over the lazy dog. '.repeat(4);
  fake.setHandler(modelHandler(() => ({ content })));
  const rawClient = new OpenAI({ baseURL: fake.baseUrl, apiKey: 'bench-key', maxRetries: 0 });

  // CASHCODE_BENCH_QUICK=1 (A/B rounds): only the per-turn and load figures, without the cold starts and web_fetch
  const quick = process.env['CASHCODE_BENCH_QUICK'] === '1';
  // start to healthy: median of 3 cold starts
  const starts: number[] = [];
  for (let i = 0; i < (quick ? 0 : 3); i++) {
    const probe = await startServer();
    starts.push(probe.startToHealthyMs);
    await probe.stop();
  }
  if (!quick) {
    figures.push({ name: 'start to healthy (median of 3)', value: median(starts), unit: 'ms', target: '≤ 1000 ms', pass: median(starts) <= 1000 });
    log(`start to healthy: ${median(starts).toFixed(0)} ms`);
  }

  const server = await startServer();
  try {
    await configure(server, fake);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = await rssMb(server.child.pid!);
    figures.push({ name: 'server RSS idle', value: idle, unit: 'MB', target: '≤ 100 MB', pass: idle <= 100 });
    log(`RSS idle: ${idle.toFixed(1)} MB`);

    // per-turn overhead, plain turn: against raw SDK calls that replay the very request the server sent for that turn
    // (same history, tools and options), so the difference is the server's own work, not the model reading a longer body
    const client = await BenchClient.connect(server.wsUrl);
    const warm = 30;
    const n = 200;
    for (let i = 0; i < warm; i++) {
      await client.turn('warm up');
      await rawCall(rawClient);
    }
    const turnTimes: number[] = [];
    const rawTimes: number[] = [];
    const helloTimes: number[] = [];
    const firstDeltaGaps: number[] = [];
    for (let i = 0; i < n; i++) {
      fake.requests.length = 0;
      const turn = await client.turn(`plain turn ${i}`);
      if (turn.error) throw new Error(`turn failed: ${turn.error}`);
      const [request, ...extra] = turnRequests(fake);
      if (!request || extra.length) throw new Error(`plain turn made ${extra.length + (request ? 1 : 0)} model calls, expected 1`);
      turnTimes.push(turn.ms);
      const firstChunk = request.firstContentChunkAt;
      if (turn.firstDeltaAt !== null && firstChunk !== undefined) firstDeltaGaps.push(turn.firstDeltaAt - firstChunk);
      let started = performance.now();
      await rawCall(rawClient, request.body as Streaming);
      rawTimes.push(performance.now() - started);
      started = performance.now();
      await rawCall(rawClient);
      helloTimes.push(performance.now() - started);
    }
    const plainOverhead = median(overheads(turnTimes, rawTimes));
    figures.push({ name: 'plain turn: median time', value: median(turnTimes), unit: 'ms' });
    figures.push({ name: 'raw openai SDK call, same request: median time', value: median(rawTimes), unit: 'ms' });
    figures.push({ name: 'raw openai SDK call, one-line request: median time', value: median(helloTimes), unit: 'ms' });
    figures.push({ name: 'plain turn: median overhead per turn', value: plainOverhead, unit: 'ms', target: '≤ 10 ms', pass: plainOverhead <= 10 });
    figures.push({ name: 'plain turn: median time − median raw time', value: median(turnTimes) - median(rawTimes), unit: 'ms' });
    figures.push({ name: 'plain turn: ratio to raw SDK call', value: median(turnTimes) / median(rawTimes), unit: '×' });
    // the plain turn's answer arrives in one network read with the end of the stream: its first delta carries the
    // whole answer and leaves with the turn's end-of-stream work (usage record, history append) done in that read
    figures.push({ name: 'model first chunk → client first delta, whole answer in one read (median)', value: median(firstDeltaGaps), unit: 'ms' });
    // a model that streams: the first token arrives on its own, the next ones 5 ms apart (what the server adds before
    // the user sees the first token)
    const streamed = await BenchClient.connect(server.wsUrl);
    const tokenGaps: number[] = [];
    fake.setHandler(modelHandler(() => ({ chunks: content.match(/.{1,16}/g) ?? [content], chunkDelayMs: 5 })));
    for (let i = 0; i < 40; i++) {
      fake.requests.length = 0;
      const turn = await streamed.turn(`streamed turn ${i}`);
      const [request] = turnRequests(fake);
      if (turn.error || !request) throw new Error(`streamed turn failed: ${turn.error ?? 'no model call'}`);
      if (i >= 5 && turn.firstDeltaAt !== null && request.firstContentChunkAt !== undefined) tokenGaps.push(turn.firstDeltaAt - request.firstContentChunkAt);
    }
    streamed.close();
    fake.setHandler(modelHandler(() => ({ content })));
    figures.push({
      name: 'model first chunk → client first delta, tokens 5 ms apart (median)',
      value: median(tokenGaps),
      unit: 'ms',
      target: '≤ 2 ms',
      pass: median(tokenGaps) <= 2,
    });
    log(`plain overhead ${plainOverhead.toFixed(2)} ms, first delta gap ${median(firstDeltaGaps).toFixed(2)} ms (whole answer in one read), ${median(tokenGaps).toFixed(2)} ms (tokens 5 ms apart)`);

    // per-turn overhead, turn with 2 tool calls (2 model calls) vs the same 2 requests replayed by raw SDK calls
    const toolClient = await BenchClient.connect(server.wsUrl);
    fake.setHandler(
      modelHandler((request) => {
        const body = request.body as { messages?: Array<{ role: string }> };
        const last = body.messages?.[body.messages.length - 1];
        if (last?.role === 'tool') return { content };
        return {
          toolCalls: [
            { name: 'list_dir', arguments: '{"path":""}' },
            { name: 'read_file', arguments: '{"path":"notes.txt"}' },
          ],
        };
      }),
    );
    const toolTurns: number[] = [];
    const rawPairs: number[] = [];
    for (let i = 0; i < warm + n; i++) {
      fake.requests.length = 0;
      const turn = await toolClient.turn(`tool turn ${i}`);
      if (turn.error) throw new Error(`tool turn failed: ${turn.error}`);
      const requests = turnRequests(fake);
      if (requests.length !== 2) throw new Error(`tool turn made ${requests.length} model calls, expected 2`);
      const rawStarted = performance.now();
      for (const request of requests) await rawCall(rawClient, request.body as Streaming);
      if (i >= warm) {
        toolTurns.push(turn.ms);
        rawPairs.push(performance.now() - rawStarted);
      }
    }
    const toolOverhead = median(overheads(toolTurns, rawPairs));
    figures.push({ name: 'turn with 2 tool calls: median time', value: median(toolTurns), unit: 'ms' });
    figures.push({ name: 'turn with 2 tool calls: 2 raw SDK calls, same requests: median time', value: median(rawPairs), unit: 'ms' });
    figures.push({ name: 'turn with 2 tool calls: median overhead per turn', value: toolOverhead, unit: 'ms', target: '≤ 10 ms', pass: toolOverhead <= 10 });
    figures.push({
      name: 'turn with 2 tool calls: median time − median raw time',
      value: median(toolTurns) - median(rawPairs),
      unit: 'ms',
    });
    figures.push({ name: 'turn with 2 tool calls: ratio to 2 raw SDK calls', value: median(toolTurns) / median(rawPairs), unit: '×' });
    log(`tool-turn overhead ${toolOverhead.toFixed(2)} ms`);
    client.close();
    toolClient.close();
    fake.requests.length = 0;

    // throughput: 100 concurrent chats, 5 turns each; each answer is 300 tokens, one SSE event per token, the whole
    // stream in one write (as a busy provider's stream often arrives)
    const tokens = Array.from({ length: 300 }, (_, i) => `tok${i % 50} `);
    fake.setHandler(modelHandler(() => ({ chunks: tokens, oneWrite: true })));
    const clients = await Promise.all(Array.from({ length: 100 }, () => BenchClient.connect(server.wsUrl)));
    const latencies: number[] = [];
    let errors = 0;
    let deltaFrames = 0;
    const loadStarted = performance.now();
    const cpuBefore = await cpuMs(server.child.pid!);
    await Promise.all(
      clients.map(async (c, index) => {
        for (let t = 0; t < 5; t++) {
          const turn = await c.turn(`load ${index}.${t}`);
          latencies.push(turn.ms);
          deltaFrames += turn.deltas;
          if (turn.error) errors++;
        }
      }),
    );
    const wall = (performance.now() - loadStarted) / 1000;
    const cpuPerTurn = ((await cpuMs(server.child.pid!)) - cpuBefore) / 500;
    const throughput = 500 / wall;
    figures.push({ name: 'server CPU per turn, 100 concurrent chats, 300-token streamed answers', value: cpuPerTurn, unit: 'ms', target: '≤ 6 ms', pass: cpuPerTurn <= 6 });
    figures.push({ name: 'throughput, 100 chats × 5 turns of 300 tokens', value: throughput, unit: 'turns/s', target: '≥ 200 turns/s', pass: throughput >= 200 });
    figures.push({ name: 'turn latency p95 under load', value: percentile(latencies, 95), unit: 'ms', target: '≤ 1000 ms', pass: percentile(latencies, 95) <= 1000 });
    figures.push({ name: 'delta events per turn under load (300 tokens each)', value: deltaFrames / 500, unit: 'events' });
    figures.push({ name: 'errors under load', value: errors, unit: 'turns', target: '0', pass: errors === 0 });
    log(`server CPU under load ${cpuPerTurn.toFixed(2)} ms per turn`);
    log(`throughput ${throughput.toFixed(0)} turns/s, p95 ${percentile(latencies, 95).toFixed(0)} ms, errors ${errors}`);
    // resident memory at the end of the load (the peak), 500 ms later (once the server has been idle for a few of its
    // heap checks: common/idle-memory-release.ts) and 3 s later
    const peak = await rssMb(server.child.pid!);
    for (const c of clients) c.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loaded = await rssMb(server.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const settled = await rssMb(server.child.pid!);
    figures.push({ name: 'server RSS at the end of 100 chats × 5 turns (peak)', value: peak, unit: 'MB' });
    figures.push({ name: 'server RSS after 100 chats × 5 turns', value: loaded, unit: 'MB', target: '≤ 120 MB', pass: loaded <= 120 });
    figures.push({ name: 'server RSS 3 s after 100 chats × 5 turns', value: settled, unit: 'MB' });
    log(`RSS after load: ${peak.toFixed(1)} MB at its end, ${loaded.toFixed(1)} MB 500 ms later, ${settled.toFixed(1)} MB 3 s later`);
  } finally {
    await server.stop();
  }

  if (quick) {
    await fake.close();
    return figures;
  }
  // parallel web_fetch: 4 concurrent fetches of a slow local page vs 1 (needs the allow-private switch)
  const page = await slowPageServer(300);
  const fetchServer = await startServer({ CASHCODE_FETCH_ALLOW_PRIVATE: 'true' });
  try {
    await configure(fetchServer, fake);
    const client = await BenchClient.connect(fetchServer.wsUrl);
    const fetchTurn = async (count: number) => {
      fake.setHandler(
        modelHandler((request) => {
          const body = request.body as { messages?: Array<{ role: string }> };
          const last = body.messages?.[body.messages.length - 1];
          if (last?.role === 'tool') return { content: 'done' };
          return {
            toolCalls: Array.from({ length: count }, (_, i) => ({ name: 'web_fetch', arguments: JSON.stringify({ url: `${page.url}?n=${i}` }) })),
          };
        }),
      );
      const turn = await client.turn(`fetch ${count}`);
      if (turn.error) throw new Error(`fetch turn failed: ${turn.error}`);
      return turn.ms;
    };
    await fetchTurn(1);
    const one: number[] = [];
    const four: number[] = [];
    for (let i = 0; i < 5; i++) {
      one.push(await fetchTurn(1));
      four.push(await fetchTurn(4));
    }
    const ratio = median(four) / median(one);
    figures.push({ name: 'turn with 1 web_fetch of a 300 ms page', value: median(one), unit: 'ms' });
    figures.push({ name: 'turn with 4 concurrent web_fetch calls', value: median(four), unit: 'ms' });
    figures.push({ name: '4 web_fetch vs 1: time ratio', value: ratio, unit: '×', target: '≤ 1.3×', pass: ratio <= 1.3 });
    log(`4 fetches / 1 fetch = ${ratio.toFixed(2)}×`);
    client.close();
  } finally {
    await fetchServer.stop();
    await page.close();
    await fake.close();
  }
  return figures;
}
