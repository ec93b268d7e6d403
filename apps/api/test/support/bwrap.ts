/**
 * Tests that need bubblewrap: they run when `bwrap` is installed; without it they fail loudly in CI (CI=true, where
 * .ci/run installs it) and are skipped with a message elsewhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { DEFAULT_EXEC_PATH } from '../../src/agent/tools/exec-process';
import { findExecutable } from '../../src/agent/sandbox/exec-sandbox';

export const BWRAP_PATH = findExecutable('bwrap', `${process.env['PATH'] ?? ''}:${DEFAULT_EXEC_PATH}`);
const inCi = ['1', 'true', 'yes'].includes((process.env['CI'] ?? '').toLowerCase());

/** `describe` when bwrap is installed; a failing test in CI and a skip elsewhere when it is not. */
export function describeWithBwrap(name: string, body: () => void): void {
  if (BWRAP_PATH !== null) {
    describe(name, body);
  } else if (inCi) {
    describe(name, () => {
      it('needs bubblewrap', () => {
        throw new Error('bubblewrap (bwrap) is not installed: CI must install it (.ci/run does: apt-get install -y bubblewrap)');
      });
    });
  } else {
    // eslint-disable-next-line no-console
    console.warn(`skipping "${name}": bubblewrap (bwrap) is not installed (apt-get install bubblewrap to run these tests)`);
    describe.skip(name, body);
  }
}

/**
 * Host processes whose command line contains `marker` (what `pgrep -f` finds), zombies excluded; with `exact`, only
 * those whose whole command line is `marker` (e.g. the `sleep 712345` itself, not the shell or bwrap that started it).
 */
export function processesMatching(marker: string, exact = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (exact ? cmdline.trim() !== marker : !cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Waits until `check` holds (polling every 20 ms), at most `timeoutMs`; returns whether it did. */
export async function eventually(check: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** A unique token for process markers: `sleep <number>` with a number no other test uses. */
export function uniqueSleepSeconds(): number {
  return 700_000 + Math.floor(Math.random() * 200_000);
}
