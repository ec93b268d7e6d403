/**
 * The browser tool: the time of a `snapshot` of a 2,000-element page (openspec browser "Requirement: Snapshot and
 * refs"), through the same code the tool runs — Chromium started by the server's launcher (inside bubblewrap when it
 * is installed), a chat's session with its guarded request route, the form refs and the full `ai` snapshot.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { BrowserSession } from '../apps/api/src/agent/browser/browser-session';
import { takeSnapshot } from '../apps/api/src/agent/browser/browser-snapshot';
import { isExecutable, launchChromium } from '../apps/api/src/agent/browser/chromium-launcher';
import { findExecutable } from '../apps/api/src/agent/sandbox/exec-sandbox';
import { DEFAULT_EXEC_PATH } from '../apps/api/src/agent/tools/exec-process';
import { SsrfGuard } from '../apps/api/src/agent/tools/ssrf-guard';
import { WorkspacePaths } from '../apps/api/src/agent/tools/workspace-paths';
import type { Figure } from './server-bench';

const CHROMIUM = '/usr/bin/chromium';
const TARGET_MS = 300;
const RUNS = 20;

/** 2,000 elements: 290 rows of a list item with a link, a button, a text field, a checkbox, text and a
 * paragraph, plus one form. */
function bigPage(): string {
  const rows: string[] = [];
  for (let i = 0; i < 290; i++) {
    rows.push(
      `<li><a href="/p${i}">link ${i}</a> <button>action ${i}</button> <input value="v${i}"> ` +
        `<input type="checkbox"> <span>text ${i}</span> <p>paragraph ${i}</p></li>`,
    );
  }
  return `<!doctype html><title>Big</title><h1>Big page</h1><form action="/s"><input name="q"><button>Search</button></form><ul>${rows.join('')}</ul>`;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? NaN;
}

export async function runBrowserBench(log: (line: string) => void): Promise<Figure[]> {
  if (!isExecutable(CHROMIUM)) {
    log(`browser: ${CHROMIUM} is missing; skipped`);
    return [];
  }
  const html = bigPage();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const bwrap = findExecutable('bwrap', DEFAULT_EXEC_PATH);
  const launched = await launchChromium(CHROMIUM, bwrap ? { bwrapPath: bwrap, protectedPaths: [] } : null, 15_000);
  const workspace = new WorkspacePaths(tmpdir(), [], []);
  const session = await BrowserSession.open(launched.browser, {
    network: { guard: new SsrfGuard({ allowPrivate: true }), timeoutMs: 15_000, maxBytes: 10 * 1024 * 1024 },
    timeoutMs: 15_000,
    maxTabs: 10,
    workspace,
  });
  try {
    const page = await session.page();
    await page.goto(url, { waitUntil: 'load' });
    const elements = await page.evaluate('document.body.querySelectorAll("*").length');
    const first = performance.now();
    const cold = await takeSnapshot(page, 20_000, 15_000);
    const coldMs = performance.now() - first;
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await takeSnapshot(page, 20_000, 15_000);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const median = percentile(times, 0.5);
    log(`browser: ${String(elements)} elements, ${cold.refs.labels.size} refs, ${cold.totalChars} chars; first ${coldMs.toFixed(0)} ms, median ${median.toFixed(0)} ms (${launched.sandboxed ? 'in bubblewrap' : 'unconfined'})`);
    return [
      { name: 'snapshot of a 2,000-element page (median)', value: median, unit: 'ms', target: `≤ ${TARGET_MS} ms`, pass: median <= TARGET_MS },
      { name: 'snapshot of a 2,000-element page (p95)', value: percentile(times, 0.95), unit: 'ms' },
      { name: 'first snapshot of the page', value: coldMs, unit: 'ms' },
    ];
  } finally {
    await session.close();
    await launched.browser.close().catch(() => undefined);
    rmSync(launched.dir, { recursive: true, force: true });
    server.close();
  }
}
