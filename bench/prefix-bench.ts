/**
 * `npm run bench -- prefix`: what a chat costs in prompt bytes and how much of each model request a provider's prompt
 * cache can reuse. One real server process (apps/api/dist) against the fake model runs a scripted 20-turn chat over
 * the WebSocket: turns with read_file / write_file / exec calls (allowed without asking), one read of a 30,000-character
 * file that the tool-output budget trims, an MCP activation in turn 7 (tool_search → mcp_prepare → a call of the repo's
 * stdio test server), MCP calls after it, and a Dream run after turn 10 (POST /api/memory/dream; the fake model answers
 * both Dream phases, and the new MEMORY.md adds a line).
 *
 * For every chat-completion request of the chat (streamed; Dream's calls are not part of the chat) the bench takes the
 * prompt as a provider renders and hashes it for its cache — the tools first, then the messages in order — serialised as
 * `JSON.stringify(tools ?? [])` followed by `JSON.stringify(messages)`, and reports:
 * - prompt bytes per turn (the first request of each turn, and the sum over all requests),
 * - the cacheable-prefix share: the longest common byte prefix with the previous chat request, over this request's
 *   length (mean and minimum over the chat's requests after the first; target: at least 90 %),
 * - the tool-output budget's effect: the same chat with `CASHCODE_TOOL_OUTPUT_BUDGET_CHARS` set very high.
 * Consolidation is kept out of the chat (threshold 1,000,000 characters): it is a boundary of its own, measured by the
 * memory suite.
 *
 * First it runs the memory chat: 20 turns of plain questions, list_dir / read_file / grep, and save_memory every fifth
 * turn, with the goals of agent-runner "Requirement: Tool definitions on a diet" (boundary requests: the first request
 * of turns 1, 12 and 20). Figures (36 requests; before: the build before a saved fact stopped rewriting the running
 * chat's system prompt and before the rarely used tools were offered only when they apply; after: this build):
 * - before: 640,234 prompt bytes in all; 5 requests do not start with the previous one (turns 6, 11 and 16, right after
 *   each save_memory, besides the boundaries 12 and 20); non-boundary share mean 94.99 %, worst 56.80 % (turn 16);
 * - after: 561,224 bytes (0.88 of before; the first request 10,876 instead of 13,049 bytes: four tool definitions
 *   fewer); only the boundaries 12 and 20 change the start; non-boundary mean 97.96 %, worst 93.08 % (turn 4: grep's
 *   900-byte result appended to a 12 KB request, growth rather than a changed start; turns 4, 9 and 14 are under 95 %);
 * - with compact tool results (grep grouped by file, 10 matches per file in a directory search; a tool-call message
 *   sent without the history's `[TOOL_CALLS: …]` placeholder): 542,528 bytes (0.85 of before); every non-boundary
 *   request at least 95 % (mean 98.25 %, worst 95.23 %: turn 3, the 20-line notes.txt appended to an 11 KB request).
 * The figures are byte counts of deterministic requests: the machine's load does not change them. bench/README.md
 * keeps the table.
 *
 * Figures (33 chat requests; budget on / budget off):
 * - before the cacheable prefix (each turn's tool-call message re-sent with the history's `[TOOL_CALLS: …]` content
 *   instead of the streamed one, MEMORY.md read fresh every turn, no pruning): mean share 93.94 / 89.94 %, minimum
 *   48.85 / 22.14 %, prompt bytes of turn 20 26,248 / 52,757, all requests 695,212 / 1,357,937 B;
 * - after (agent/context-window.ts, keep 3 turns, boundaries every 8): mean 95.18 / 93.15 %, minimum 48.74 / 22.11 %,
 *   turn 20 21,520 / 21,478 B, all requests 639,058 / 956,620 B, largest request 23,651 / 50,160 B. Three requests do
 *   not start with the previous one: turn 7 (the MCP activation appends tools, which a provider renders before the
 *   messages), turn 12 (the first boundary: 8 turns' tool results stubbed, Dream's MEMORY.md arrives) and turn 20
 *   (the next boundary). The minimum is the activation's request; the low shares of turn 5 are growth (a large
 *   result appended), not a change of the prefix.
 * - with the rarely used tools offered only when they apply (agent-runner "Requirement: Tool definitions on a diet"):
 *   mean 93.16 / 92.76 %, minimum 22.38 / 17.66 %, turn 20 21,099 / 20,495 B, all requests 608,201 / 911,713 B,
 *   largest request 23,230 / 49,177 B. Four requests do not start with the previous one: turn 5's second (the first
 *   artifact: read_artifact is offered from then on, and the large preview is appended — the minimum), 7 (the MCP
 *   activation, which now also brings the MCP resource tools), 12 and 20 (the boundaries).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { FakeModelServer, type FakeStep, type RecordedRequest } from '../apps/api/test/support/fake-model-server';
import { DEFAULT_KEEP_TOOL_RESULTS_TURNS, prunedTurnCount } from '../apps/api/src/agent/context-window';
import { BenchClient, configure, startServer, type Figure, type RunningServer } from './server-bench';

/** compiled to bench/dist/bench/*.js */
const ROOT = join(__dirname, '..', '..', '..');
const STDIO_SERVER = join(ROOT, 'mcp_servers', 'test_stdio_mcp', 'dist', 'index.js');
const TURNS = 20;
const DREAM_AFTER_TURN = 10;
const SEEDED_MEMORY = '# Preferences\n- The user prefers short answers\n- The user works in Berlin\n';

interface Body {
  stream?: boolean;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: unknown[];
}

/** The prompt as a provider renders it for its prefix cache: tools, then the messages in order. */
export function renderedPrompt(body: Body): Buffer {
  return Buffer.from(JSON.stringify(body.tools ?? []) + JSON.stringify(body.messages ?? []), 'utf8');
}

/** Bytes at the start of `b` that equal the start of `a`. */
export function commonPrefixBytes(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The model's steps for turn `i` (1-based): a tool round or two, then an answer. */
function turnScript(i: number): { content: string; steps: FakeStep[] } {
  const answer = (text: string): FakeStep => ({ content: `${text} (turn ${i}).` });
  const call = (name: string, args: Record<string, unknown>): FakeStep => ({
    toolCalls: [{ id: `call_t${i}_${name}`, name, arguments: JSON.stringify(args) }],
  });
  switch (i) {
    case 2:
      return { content: 'What is in notes.txt?', steps: [call('read_file', { path: 'notes.txt' }), answer('The notes are benchmark notes')] };
    case 3:
      return { content: 'Write a summary file.', steps: [call('write_file', { path: 'summary.txt', content: 'Summary: benchmark notes.\n' }), answer('Written')] };
    case 4:
      return { content: 'List the workspace.', steps: [call('exec', { command: 'ls -1' }), answer('Listed')] };
    case 5:
      return { content: 'Read the big log.', steps: [call('read_file', { path: 'big.log' }), answer('The log repeats itself')] };
    case 7:
      return {
        content: 'Greet me through MCP.',
        steps: [
          call('tool_search', { query: 'say hello' }),
          call('mcp_prepare', { server_name: 'hello' }),
          call('mcp_hello_say_hello', {}),
          answer('The server says hello'),
        ],
      };
    case 8:
    case 14:
      return { content: 'Greet me again.', steps: [call('mcp_hello_say_hello', {}), answer('Greeted again')] };
    case 10:
    case 16:
      return { content: 'Read the notes once more.', steps: [call('read_file', { path: 'notes.txt' }), answer('Same notes')] };
    case 12:
      return { content: 'Count the files.', steps: [call('exec', { command: 'ls -1 | wc -l' }), answer('Counted')] };
    case 18:
      return { content: 'Append to the summary.', steps: [call('write_file', { path: 'summary.txt', content: 'Summary, second edition.\n' }), answer('Appended')] };
    default:
      return { content: `Plain question number ${i}: what do you think?`, steps: [answer('A plain answer')] };
  }
}

interface ChatRun {
  /** rendered prompt bytes of every chat request, in order, with the turn it belongs to */
  requests: Array<{ turn: number; bytes: number; share: number | null; broken: boolean; boundary: boolean }>;
}

/**
 * The memory chat (plain questions, list_dir / read_file / grep, save_memory every fifth turn): what a chat that
 * writes long-term memory costs. A memory written during the chat reaches its model through the conversation; only the
 * context boundaries may change the request's start.
 */
function memoryChatScript(i: number): { content: string; steps: FakeStep[] } {
  const answer = (text: string): FakeStep => ({ content: `${text} (turn ${i}).` });
  const call = (name: string, args: Record<string, unknown>): FakeStep => ({
    toolCalls: [{ id: `call_m${i}_${name}`, name, arguments: JSON.stringify(args) }],
  });
  switch (i % 5) {
    case 0:
      return {
        content: `Remember that I like topic ${i}.`,
        steps: [call('save_memory', { content: `The user likes topic ${i}` }), answer('Remembered')],
      };
    case 2:
      return { content: 'What is in the workspace?', steps: [call('list_dir', { path: '.' }), answer('A notes file')] };
    case 3:
      return { content: 'What is in notes.txt?', steps: [call('read_file', { path: 'notes.txt' }), answer('Benchmark notes')] };
    case 4:
      return { content: 'Where does the word benchmark occur?', steps: [call('grep', { pattern: 'benchmark', path: '.' }), answer('In notes.txt')] };
    default:
      return { content: `Plain question number ${i}: what do you think?`, steps: [answer('A plain answer')] };
  }
}

/** Whether a turn's first request starts a context epoch (agent/context-window.ts): the chat's first turn, or pruning. */
function boundaryTurn(turn: number): boolean {
  if (turn === 1) return true;
  return prunedTurnCount(turn - 1, DEFAULT_KEEP_TOOL_RESULTS_TURNS) !== prunedTurnCount(turn - 2, DEFAULT_KEEP_TOOL_RESULTS_TURNS);
}

async function json(response: Response): Promise<Record<string, unknown>> {
  if (!response.ok) throw new Error(`${response.url} → ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

async function scriptedChat(
  extraEnv: Record<string, string>,
  log: (line: string) => void,
  scenario: 'tools' | 'memory' = 'tools',
): Promise<ChatRun> {
  const script = scenario === 'memory' ? memoryChatScript : turnScript;
  const fake = await FakeModelServer.start();
  const catalogDir = await mkdtemp(join(tmpdir(), 'cashcode-bench-prefix-'));
  const catalog = join(catalogDir, 'mcp_config.json');
  await writeFile(
    catalog,
    JSON.stringify({
      hello: {
        type: 'stdio',
        display_name: 'Test stdio MCP',
        description: 'Test server over stdio',
        command: process.execPath,
        args: [STDIO_SERVER],
        env: { CASHCODE_MCP_TEST_TOOLS: '1' },
      },
    }),
  );
  // Dream's two phases are the only non-streamed calls (titles are off in bench servers, consolidation kept out)
  fake.setHandler((request) => {
    const body = request.body as Body | null;
    if (body?.stream === true) return undefined;
    const system = String(body?.messages?.[0]?.content ?? '');
    if (system.startsWith('You edit MEMORY.md')) return { content: `${SEEDED_MEMORY}- The user likes benchmark notes\n` };
    return { content: '## New facts\n- The user likes benchmark notes' };
  });
  let server: RunningServer | null = null;
  try {
    server = await startServer({
      CASHCODE_MCP_CATALOG: catalog,
      DREAM_INTERVAL: '0',
      CASHCODE_CONSOLIDATION_THRESHOLD: '1000000',
      ...extraEnv,
    });
    const workspace = join(server.dirs[0]!, 'workspace');
    await writeFile(join(workspace, 'big.log'), Array.from({ length: 400 }, (_, n) => `line ${String(n).padStart(4, '0')}: ${'x'.repeat(64)}`).join('\n'));
    await configure(server, fake);
    const headers = { 'content-type': 'application/json' };
    await json(
      await fetch(`${server.httpUrl}/api/settings/tool-policies`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ defaults: { exec: 'allow', mcp: 'allow' } }),
      }),
    );
    await json(
      await fetch(`${server.httpUrl}/api/memory`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ content: SEEDED_MEMORY, hash: createHash('sha256').update('').digest('hex') }),
      }),
    );
    const client = await BenchClient.connect(server.wsUrl);
    const turnOf: number[] = [];
    const chatRequests: RecordedRequest[] = [];
    for (let i = 1; i <= TURNS; i++) {
      const { content, steps } = script(i);
      fake.enqueue(...steps);
      const before = fake.completions.length;
      const result = await client.turn(content);
      if (result.error) throw new Error(`turn ${i} failed: ${result.error}`);
      for (const request of fake.completions.slice(before)) {
        if ((request.body as Body | null)?.stream !== true) continue;
        chatRequests.push(request);
        turnOf.push(i);
      }
      if (scenario === 'tools' && i === DREAM_AFTER_TURN) {
        const dream = await json(await fetch(`${server.httpUrl}/api/memory/dream`, { method: 'POST' }));
        const run = dream['run'] as { outcome?: string } | null;
        log(`prefix: Dream after turn ${i}: ran=${String(dream['ran'])} outcome=${run?.outcome ?? '-'}`);
      }
    }
    client.close();
    // CASHCODE_BENCH_PREFIX_DUMP=<dir>: the rendered prompts, one file per request, to diff consecutive ones
    const dump = process.env['CASHCODE_BENCH_PREFIX_DUMP'];
    if (dump) {
      await mkdir(dump, { recursive: true });
      for (const [index, request] of chatRequests.entries()) {
        await writeFile(join(dump, `${String(index).padStart(2, '0')}-turn${turnOf[index]}.json`), JSON.stringify(request.body, null, 1));
      }
    }
    const requests: ChatRun['requests'] = [];
    let previous: Buffer | null = null;
    let previousTurn = 0;
    for (const [index, request] of chatRequests.entries()) {
      const rendered = renderedPrompt(request.body as Body);
      const common = previous === null ? 0 : commonPrefixBytes(previous, rendered);
      requests.push({
        turn: turnOf[index]!,
        bytes: rendered.length,
        share: previous === null ? null : common / rendered.length,
        // the previous request (without the closing bracket of its messages) is not a prefix of this one: something
        // before the new messages changed
        broken: previous !== null && common < previous.length - 1,
        // the first request of a turn that starts a context epoch may change the request's start (documented)
        boundary: turnOf[index]! !== previousTurn && boundaryTurn(turnOf[index]!),
      });
      previous = rendered;
      previousTurn = turnOf[index]!;
    }
    return { requests };
  } finally {
    await server?.stop();
    await fake.close();
    await rm(catalogDir, { recursive: true, force: true });
  }
}

function summarise(label: string, run: ChatRun, figures: Figure[], log: (line: string) => void): void {
  const shares = run.requests.flatMap((r) => (r.share === null ? [] : [r.share]));
  const mean = shares.reduce((sum, s) => sum + s, 0) / shares.length;
  const min = Math.min(...shares);
  const total = run.requests.reduce((sum, r) => sum + r.bytes, 0);
  const perTurn: string[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const rows = run.requests.filter((r) => r.turn === turn);
    perTurn.push(`${turn}:${rows.map((r) => `${r.bytes}${r.share === null ? '' : `@${(r.share * 100).toFixed(0)}%`}`).join('+')}`);
  }
  log(`prefix ${label}: per turn (bytes@share per request) ${perTurn.join(' ')}`);
  const broken = run.requests.filter((r) => r.broken).map((r) => r.turn);
  log(`prefix ${label}: requests whose previous request is not their prefix, by turn: ${broken.join(', ') || 'none'}`);
  figures.push({ name: `${label}: chat requests`, value: run.requests.length, unit: 'requests' });
  for (const turn of [1, 5, 10, 15, 20]) {
    const first = run.requests.find((r) => r.turn === turn);
    if (first) figures.push({ name: `${label}: prompt bytes, turn ${turn} (first request)`, value: first.bytes, unit: 'B' });
  }
  figures.push({ name: `${label}: prompt bytes, all requests of the chat`, value: total, unit: 'B' });
  figures.push({ name: `${label}: largest request`, value: Math.max(...run.requests.map((r) => r.bytes)), unit: 'B' });
  figures.push({ name: `${label}: cacheable-prefix share, mean`, value: mean * 100, unit: '%', target: '>= 90 %', pass: mean >= 0.9 });
  figures.push({ name: `${label}: cacheable-prefix share, minimum`, value: min * 100, unit: '%' });
  figures.push({ name: `${label}: requests that do not start with the previous request`, value: broken.length, unit: 'requests' });
}

/**
 * The goals of a chat's prefix: the requests but the boundary ones reuse at least 95 % of their bytes from the previous
 * request on average, the worst at least 90 % (a request below 95 % is one whose new tool result is large next to
 * it: growth, not a changed start); `baselineBytes` (CASHCODE_BENCH_PREFIX_BASELINE_BYTES, the same chat measured on
 * an earlier build with CASHCODE_BENCH_API_DIST) gives the total's goal, at most 0.9 of it.
 */
function prefixGoals(label: string, run: ChatRun, figures: Figure[], log: (line: string) => void): void {
  const inner = run.requests.filter((r) => r.share !== null && !r.boundary);
  const shares = inner.map((r) => r.share as number);
  const worst = Math.min(...shares);
  const below = inner.filter((r) => (r.share as number) < 0.95);
  const total = run.requests.reduce((sum, r) => sum + r.bytes, 0);
  log(
    `prefix ${label}: boundary requests at turns ${run.requests.filter((r) => r.boundary).map((r) => r.turn).join(', ')}; ` +
      `non-boundary requests under 95 %: ${below.map((r) => `turn ${r.turn} ${((r.share as number) * 100).toFixed(1)} %`).join(', ') || 'none'}`,
  );
  const mean = shares.reduce((sum, share) => sum + share, 0) / shares.length;
  figures.push({ name: `${label}: non-boundary requests, mean reusable share`, value: mean * 100, unit: '%', target: '>= 95 %', pass: mean >= 0.95 });
  figures.push({ name: `${label}: non-boundary requests under 95 %`, value: below.length, unit: `of ${inner.length}` });
  figures.push({ name: `${label}: worst non-boundary request, reusable share`, value: worst * 100, unit: '%', target: '>= 90 %', pass: worst >= 0.9 });
  const baseline = Number(process.env['CASHCODE_BENCH_PREFIX_BASELINE_BYTES'] ?? '');
  if (Number.isFinite(baseline) && baseline > 0) {
    figures.push({
      name: `${label}: prompt bytes, all requests, over the baseline build's`,
      value: total / baseline,
      unit: 'x',
      target: '<= 0.9',
      pass: total <= 0.9 * baseline,
    });
  }
}

export async function runPrefixBench(log: (line: string) => void): Promise<Figure[]> {
  const figures: Figure[] = [];
  const memory = await scriptedChat({}, log, 'memory');
  summarise('memory chat', memory, figures, log);
  prefixGoals('memory chat', memory, figures, log);
  // CASHCODE_BENCH_PREFIX_ONLY=memory: the memory chat only (e.g. against an earlier build for its baseline bytes)
  if (process.env['CASHCODE_BENCH_PREFIX_ONLY'] === 'memory') return figures;
  summarise('20-turn chat', await scriptedChat({}, log), figures, log);
  summarise('20-turn chat, tool-output budget off (10,000,000)', await scriptedChat({ CASHCODE_TOOL_OUTPUT_BUDGET_CHARS: '10000000' }, log), figures, log);
  return figures;
}
