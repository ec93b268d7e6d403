/**
 * HTML → readable Markdown for `web_fetch`, with a real HTML parser (turndown parses with domino in Node), never
 * regexes. Scripts, styles, navigation and form noise are dropped; links and images keep only http(s) targets,
 * resolved against the page URL.
 *
 * The conversion runs in a worker thread with a time budget, like `grep`'s regex: the HTML parser and turndown are
 * not linear on hostile pages (10,000 nested `<div>`s or a long run of `&nbsp;` cost domino and turndown time
 * quadratic in the run), so the page is converted where the main thread can stop it, and the input is cut to
 * HTML_MAX_CHARS first. The text tidy that follows runs on the main thread and is linear.
 */
import { Worker } from 'node:worker_threads';

/** decoded characters of a page handed to the converter (the fetch itself is bounded by CASHCODE_FETCH_MAX_BYTES) */
export const HTML_MAX_CHARS = 2 * 1024 * 1024;
/** time budget of one conversion */
export const HTML_CONVERT_TIMEOUT_MS = 5000;

/** The page could not be converted within the time budget. */
export class HtmlConversionTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`converting the page to text took longer than ${timeoutMs} ms`);
    this.name = 'HtmlConversionTimeout';
  }
}

/**
 * The converter, plain JavaScript evaluated with `eval: true` so that it runs the same under the compiled server,
 * the bundle (turndown stays an external module, resolved by the main thread) and Jest.
 * Beyond turndown's defaults: `<br>` becomes a bare newline, so that a run of them is collapsed by turndown's join
 * like block separators (its own `"  \n"` piles up into one long whitespace run), and whitespace in ordinary text
 * (non-breaking spaces included) is folded to one space before escaping.
 */
const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const TurndownService = require(workerData.turndownPath);
const NOISE = ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'nav',
  'footer', 'form', 'button', 'select', 'input', 'textarea', 'head', 'meta', 'link'];
const baseUrl = workerData.baseUrl;
function absoluteHttpUrl(raw) {
  if (raw === null || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim(), baseUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}
const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
service.remove(NOISE);
service.addRule('title', {
  filter: 'title',
  replacement: (content) => (content.trim() === '' ? '' : 'Title: ' + content.trim() + '\\n\\n'),
});
service.addRule('safeLinks', {
  filter: 'a',
  replacement: (content, node) => {
    const href = absoluteHttpUrl(node.getAttribute('href'));
    const text = content.trim();
    if (text === '') return '';
    return href === null ? text : '[' + text + '](' + href + ')';
  },
});
service.addRule('safeImages', {
  filter: 'img',
  replacement: (_content, node) => {
    const alt = (node.getAttribute('alt') || '').trim();
    const src = absoluteHttpUrl(node.getAttribute('src'));
    if (alt === '') return '';
    return src === null ? '[image: ' + alt + ']' : '![' + alt + '](' + src + ')';
  },
});
service.addRule('lineBreak', { filter: 'br', replacement: () => '\\n' });
const escape = service.escape.bind(service);
service.escape = (text) => escape(text.replace(/\\s+/g, ' '));
let markdown;
try {
  markdown = { ok: true, text: service.turndown(workerData.html) };
} catch (error) {
  markdown = { ok: false, message: error instanceof Error ? error.message : String(error) };
}
parentPort.postMessage(markdown);
`;

type WorkerReply = { ok: true; text: string } | { ok: false; message: string };

let turndownPath: string | null = null;

/**
 * Converts an HTML document or fragment to Markdown, whitespace tidied, in a worker stopped after `timeoutMs`
 * (rejecting with HtmlConversionTimeout) or when `signal` aborts. Only the first HTML_MAX_CHARS characters are read.
 */
export function htmlToMarkdown(
  html: string,
  baseUrl: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? HTML_CONVERT_TIMEOUT_MS;
  const signal = options.signal;
  signal?.throwIfAborted();
  turndownPath ??= require.resolve('turndown');
  const input = html.length > HTML_MAX_CHARS ? html.slice(0, HTML_MAX_CHARS) : html;
  return new Promise<string>((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { turndownPath, html: input, baseUrl },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: false,
      stderr: false,
    });
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      action();
    };
    const timer = setTimeout(() => settle(() => reject(new HtmlConversionTimeout(timeoutMs))), timeoutMs);
    const onAbort = () => settle(() => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted')));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (reply: WorkerReply) =>
      settle(() => (reply.ok ? resolve(tidyText(reply.text)) : reject(new Error(`the page could not be converted: ${reply.message}`)))),
    );
    worker.on('error', (error) => settle(() => reject(error)));
    worker.on('exit', (code) => settle(() => reject(new Error(`the conversion worker stopped unexpectedly (exit code ${code})`))));
  });
}

/**
 * Trims spaces and tabs at line ends and collapses runs of 3+ newlines, CRLF and CR read as newlines
 * (openspec builtin-tools).
 * Linear, with few replacements on any input: a run of 3+ line-end characters holds at least 2 line breaks whatever
 * its mix of CR and LF, so it becomes `\n\n` at once (one match, however long); the CRs left, in runs of 1 or 2
 * line ends, are converted by split and join rather than one replacement each; a blank run is only tried where it
 * starts (the look-behind), so a long run of spaces that does not end a line is scanned once, not once per space.
 */
export function tidyText(text: string): string {
  let out = text.replace(/[\n\r]{3,}/g, '\n\n');
  if (out.includes('\r')) {
    out = out.split('\r\n').join('\n');
    if (out.includes('\r')) out = out.split('\r').join('\n');
  }
  return out
    .replace(/(?<![ \t])[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
