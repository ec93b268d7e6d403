/**
 * Differential test of the exec command analyser against the shell that really runs exec lines (dash, `/bin/sh`):
 * for generated lines (test/support/shell-lines.ts) that the analyser accepts, dash runs the line under strace inside
 * bubblewrap (no network, a fresh temporary workspace, PATH holding only a directory of stub programs, each a copy of
 * `true`), and every program dash really started must be one the analyser reported. The same holds, by program name,
 * for the commands the approval card is given (`commandSegments`). Needs bwrap and strace: skipped with a message
 * when either is missing, failing instead under CI=true.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { buildBwrapArgs } from '../src/agent/sandbox/bwrap-args';
import { findExecutable } from '../src/agent/sandbox/exec-sandbox';
import { DEFAULT_EXEC_PATH } from '../src/agent/tools/exec-process';
import { analyzeCommand, commandSegments } from '../src/approvals/command-analysis';
import { LAUNCHER_PROGRAMS } from '../src/approvals/exec-programs';
import { BWRAP_PATH } from './support/bwrap';
import { mixedLine, STUB_PROGRAMS } from './support/shell-lines';

const SEARCH_PATH = `${process.env['PATH'] ?? ''}:${DEFAULT_EXEC_PATH}`;
const STRACE_PATH = findExecutable('strace', SEARCH_PATH);
const DASH_PATH = findExecutable('dash', SEARCH_PATH);
const TRUE_PATH = findExecutable('true', SEARCH_PATH);
const inCi = ['1', 'true', 'yes'].includes((process.env['CI'] ?? '').toLowerCase());
const missing = [
  ...(BWRAP_PATH === null ? ['bubblewrap (bwrap)'] : []),
  ...(STRACE_PATH === null ? ['strace'] : []),
  ...(DASH_PATH === null ? ['dash'] : []),
];

/** Where the stubs are inside the sandbox. */
const STUB_DIR = '/stubs';
const LINES = 300;

interface Traced {
  /** paths of the successful execve calls after dash's own */
  started: string[];
  /** dash's exit status (for the report) */
  code: number | null;
}

/** The execve paths of strace's per-process files (`-ff`): only calls that returned 0. */
function startedPrograms(dir: string, prefix: string): string[] {
  const started: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${prefix}.`)) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      // `execve("/stubs/ls", ["ls"], 0x… /* 3 vars */) = 0`
      if (!line.startsWith('execve("') || !line.endsWith(') = 0')) continue;
      started.push(line.slice('execve("'.length, line.indexOf('"', 'execve("'.length)));
    }
    rmSync(join(dir, name));
  }
  // the first program started is dash itself (strace starts it)
  const own = started.indexOf(DASH_PATH as string);
  if (own !== -1) started.splice(own, 1);
  return started;
}

function runTraced(workspace: string, stubs: string, line: string, index: number): Promise<Traced> {
  const prefix = `.trace-${index}`;
  const args = buildBwrapArgs({
    workspace,
    network: false,
    protectedPaths: [],
    readOnlyBinds: [{ source: stubs, target: STUB_DIR }],
    env: { PATH: STUB_DIR, HOME: workspace, LANG: 'C' },
    dropCapabilities: true,
  });
  const command = [STRACE_PATH as string, '-f', '-ff', '-qq', '-e', 'trace=execve', '-e', 'signal=none', '-o', join(workspace, prefix), DASH_PATH as string, '-c', line];
  return new Promise((resolve, reject) => {
    const child = spawn(BWRAP_PATH as string, [...args, ...command], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (/^(?:bwrap|strace):/m.test(stderr)) reject(new Error(`the tracer failed for ${JSON.stringify(line)}: ${stderr}`));
      else resolve({ started: startedPrograms(workspace, prefix), code });
    });
  });
}

const describeTraced = missing.length === 0 ? describe : inCi ? describe : describe.skip;
if (missing.length > 0 && !inCi) {
  // eslint-disable-next-line no-console
  console.warn(`skipping the dash differential test: ${missing.join(', ')} missing (apt-get install bubblewrap strace)`);
}

describeTraced('exec command analysis against dash (differential)', () => {
  let root: string;
  let stubs: string;
  let workspace: string;

  beforeAll(() => {
    if (missing.length > 0) return;
    root = mkdtempSync(join(tmpdir(), 'cc-dash-diff-'));
    stubs = join(root, 'stubs');
    workspace = join(root, 'work');
    mkdirSync(stubs);
    mkdirSync(workspace);
    for (const name of STUB_PROGRAMS) copyFileSync(TRUE_PATH as string, join(stubs, name));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('Scenario: the programs dash starts are a subset of what the analyser reported', async () => {
    if (missing.length > 0) throw new Error(`${missing.join(', ')} not installed: CI must install them (.ci/run does)`);
    // the tracer itself works: a plain line shows its two programs
    expect((await runTraced(workspace, stubs, 'ls; id | git', -1)).started.sort()).toEqual(['/stubs/git', '/stubs/id', '/stubs/ls']);

    // a new sample on every run (the seed is in the failure report)
    const seed = Date.now() % 2 ** 31;
    const lines = fc.sample(mixedLine, { numRuns: LINES * 3, seed });
    const candidates = [...new Set(lines)].filter((line) => commandSegments(line).ok).slice(0, LINES);
    const failures: string[] = [];
    let strictAccepted = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < candidates.length) {
        const index = next++;
        const line = candidates[index] as string;
        const traced = await runTraced(workspace, stubs, line, index);
        const segments = commandSegments(line);
        const named = new Set(segments.ok ? segments.commands.map((c) => basename(c.program)) : []);
        // a launcher starts what its arguments name (the card shows it as one command; no rule covers it)
        const launches = [...named].some((name) => LAUNCHER_PROGRAMS.has(name));
        const unnamed = traced.started.filter((p) => !named.has(basename(p)));
        if (unnamed.length > 0 && !launches) failures.push(`card: ${JSON.stringify(line)} started ${unnamed.join(', ')}`);
        const analysis = analyzeCommand(line);
        if (!analysis.ok) continue;
        strictAccepted++;
        const reported = new Set(analysis.commands.map((c) => (c.program.startsWith('/') ? c.program : `${STUB_DIR}/${c.program}`)));
        const unreported = traced.started.filter((p) => !reported.has(p));
        if (unreported.length > 0) failures.push(`rules: ${JSON.stringify(line)} started ${unreported.join(', ')}`);
      }
    };
    await Promise.all([worker(), worker()]);
    expect({ seed, failures }).toEqual({ seed, failures: [] });
    // the generator is not vacuous: many lines reach dash, and most of them pass the strict analysis too
    expect(candidates.length).toBe(LINES);
    expect(strictAccepted).toBeGreaterThan(LINES / 3);
  }, 120_000);
});
