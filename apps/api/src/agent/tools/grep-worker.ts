/**
 * The matching half of `grep`, run in a worker thread so that a user regex that backtracks catastrophically
 * (`(a+)+$`) can be stopped: the main thread terminates the worker when the time budget is spent, which interrupts
 * V8's regex engine. The worker source is plain JavaScript evaluated with `eval: true`, so it runs the same under
 * the compiled server and under Jest.
 */
import { Worker } from 'node:worker_threads';

export interface GrepFile {
  absolute: string;
  relative: string;
}

export interface GrepJob {
  files: GrepFile[];
  source: string;
  flags: string;
  /** stop after this many matches (one more than shown, to know whether there are more) */
  maxMatches: number;
  /** matches reported per file at most; the file's further matches are only counted (and do not count to maxMatches) */
  maxPerFile?: number;
  /** bytes read per file */
  maxFileBytes: number;
  /** bytes read in all */
  maxTotalBytes: number;
  /** characters of a matching line that are reported */
  maxLineChars: number;
}

export interface GrepMatch {
  relative: string;
  line: number;
  text: string;
}

export interface GrepOutcome {
  matches: GrepMatch[];
  /** matches past `maxPerFile`, counted but not reported, by file */
  moreInFile: Map<string, number>;
  /** true when the time budget ran out and the worker was stopped */
  timedOut: boolean;
  /** files not fully read because of the byte budgets */
  truncatedFiles: number;
  /** true when the total byte budget stopped the search */
  budgetExhausted: boolean;
}

const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const job = workerData;
const re = new RegExp(job.source, job.flags);
const decoder = new TextDecoder('utf-8', { fatal: false });
const noFollow = fs.constants.O_NOFOLLOW || 0;
let found = 0;
let totalBytes = 0;
let truncatedFiles = 0;
let budgetExhausted = false;
const perFile = job.maxPerFile || Infinity;
outer: for (const file of job.files) {
  if (totalBytes >= job.maxTotalBytes) { budgetExhausted = true; break; }
  let fd;
  try {
    fd = fs.openSync(file.absolute, fs.constants.O_RDONLY | noFollow);
  } catch (error) {
    continue;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) continue;
    const allowed = Math.min(stat.size, job.maxFileBytes, job.maxTotalBytes - totalBytes);
    if (allowed < stat.size) truncatedFiles += 1;
    const buffer = Buffer.alloc(allowed);
    let read = 0;
    while (read < allowed) {
      const n = fs.readSync(fd, buffer, read, allowed - read, read);
      if (n === 0) break;
      read += n;
    }
    totalBytes += read;
    const head = buffer.subarray(0, Math.min(read, 512));
    if (head.includes(0)) continue;
    const lines = decoder.decode(buffer.subarray(0, read)).split(/\\r\\n|\\n|\\r/);
    let inFile = 0;
    for (let i = 0; i < lines.length; i += 1) {
      if (re.test(lines[i])) {
        inFile += 1;
        if (inFile > perFile) continue;
        let text = lines[i].trim();
        if (text.length > job.maxLineChars) text = text.slice(0, job.maxLineChars) + '…';
        parentPort.postMessage({ type: 'match', match: { relative: file.relative, line: i + 1, text } });
        found += 1;
        if (found >= job.maxMatches) break outer;
      }
    }
    if (inFile > perFile) parentPort.postMessage({ type: 'more', relative: file.relative, count: inFile - perFile });
  } finally {
    fs.closeSync(fd);
  }
}
parentPort.postMessage({ type: 'done', truncatedFiles, budgetExhausted });
`;

type WorkerMessage =
  | { type: 'match'; match: GrepMatch }
  | { type: 'more'; relative: string; count: number }
  | { type: 'done'; truncatedFiles: number; budgetExhausted: boolean };

/** Runs the job in a fresh worker, stopping it when `timeoutMs` passes or `signal` aborts. */
export function runGrepWorker(job: GrepJob, timeoutMs: number, signal: AbortSignal): Promise<GrepOutcome> {
  signal.throwIfAborted();
  return new Promise<GrepOutcome>((resolve, reject) => {
    const matches: GrepMatch[] = [];
    const moreInFile = new Map<string, number>();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: job,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: false,
      stderr: false,
    });
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      action();
    };
    const timer = setTimeout(() => {
      settle(() => resolve({ matches, moreInFile, timedOut: true, truncatedFiles: 0, budgetExhausted: false }));
      void worker.terminate();
    }, timeoutMs);
    const onAbort = () => {
      settle(() => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted')));
      void worker.terminate();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'match') {
        matches.push(message.match);
        return;
      }
      if (message.type === 'more') {
        moreInFile.set(message.relative, message.count);
        return;
      }
      settle(() =>
        resolve({
          matches,
          moreInFile,
          timedOut: false,
          truncatedFiles: message.truncatedFiles,
          budgetExhausted: message.budgetExhausted,
        }),
      );
      void worker.terminate();
    });
    worker.on('error', (error) => settle(() => reject(error)));
    worker.on('exit', (code) => {
      settle(() => reject(new Error(`the search worker stopped unexpectedly (exit code ${code})`)));
    });
  });
}
