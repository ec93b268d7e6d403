/**
 * Every request a browser page makes, served by the server itself (openspec browser "Requirement: Confinement"):
 * Chromium's own network is never used (inside bubblewrap it has none at all). The route handler checks the URL with
 * the SsrfGuard of web_fetch (http and https only, no credentials, IP literals judged), opens the connection with the
 * guard's `lookup` (every resolved address must be public, checked at connect time, so DNS rebinding cannot slip
 * through), caps the response at `maxBytes` and hands the response to the page. A redirect is handed on as it is, and
 * the page's request for its target comes through here again.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { Route } from 'playwright-core';
import { describeNetworkError, readBody } from '../tools/guarded-fetch';
import { looksExecutable, safeDownloadName } from './browser-downloads';
import { BlockedUrlError, type SsrfGuard } from '../tools/ssrf-guard';
import { formatBytes, formatSeconds } from '../tools/tool-args';

export interface BrowserNetworkOptions {
  guard: SsrfGuard;
  timeoutMs: number;
  maxBytes: number;
}

/** A request the page could not make, as the tool reports it to the model. */
export interface RefusedRequest {
  url: string;
  reason: string;
  /** blocked by the address rules (not a network failure) */
  blocked: boolean;
  /** the page's main document (a navigation), not a sub-resource */
  navigation: boolean;
}

/** A main-frame answer that redirects: the tool navigates to `to` itself, so the next hop is routed and checked too. */
export interface PendingRedirect {
  from: string;
  to: string;
  status: number;
  /** the method of the redirected request */
  method: string;
}

export interface RouteListener {
  refused(entry: RefusedRequest): void;
  /** the tab's document redirected (Chromium would follow a handed-on redirect without this route) */
  redirected(redirect: PendingRedirect): void;
  /** a program the page tried to download was dropped before it reached the browser */
  executableRefused(line: string): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** redirects of a sub-resource followed here (each hop checked) */
const MAX_SUBRESOURCE_REDIRECTS = 5;

/** Request headers the server sets itself. */
const DROPPED_REQUEST_HEADERS = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);
/** Response headers that describe the wire form, not the body the page gets. */
const DROPPED_RESPONSE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function shortUrl(url: string): string {
  return url.length <= 200 ? url : `${url.slice(0, 199)}…`;
}

/**
 * Serves one routed request; tells `listener` about a request that was blocked or failed, a redirect of the tab's
 * document and a refused program download. Never throws.
 */
export async function serveRoute(route: Route, options: BrowserNetworkOptions, listener: RouteListener): Promise<void> {
  const request = route.request();
  const navigation = request.isNavigationRequest() && isMainFrame(route);
  let current = request.url();
  const refuse = async (reason: string, blocked: boolean) => {
    listener.refused({ url: shortUrl(current), reason, blocked, navigation });
    await route.abort(blocked ? 'blockedbyclient' : 'failed').catch(() => undefined);
  };
  const deadline = AbortSignal.timeout(options.timeoutMs);
  try {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(await request.allHeaders())) {
      if (!DROPPED_REQUEST_HEADERS.has(name.toLowerCase()) && !name.startsWith(':')) headers[name] = value;
    }
    headers['accept-encoding'] = 'gzip, deflate, br';
    let method = request.method();
    let body = request.postDataBuffer();
    let response: http.IncomingMessage;
    for (let hop = 0; ; hop += 1) {
      const url = new URL(current);
      options.guard.checkUrl(url);
      response = await open(url, method, headers, body, options.guard, deadline);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (!REDIRECTS.has(status) || location === undefined) break;
      response.resume();
      const target = new URL(location, url).toString();
      if (navigation) {
        listener.redirected({ from: current, to: target, status, method });
        await route.abort('aborted').catch(() => undefined);
        return;
      }
      if (hop >= MAX_SUBRESOURCE_REDIRECTS) throw new Error(`too many redirects (more than ${MAX_SUBRESOURCE_REDIRECTS})`);
      current = target;
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = null;
      }
    }
    const { body: content, truncated } = await readBody(response, options.maxBytes, deadline);
    if (truncated) {
      await refuse(`the response is larger than ${formatBytes(options.maxBytes)}`, false);
      return;
    }
    if (isProgram(content, String(response.headers['content-type'] ?? ''))) {
      listener.executableRefused(`refused download ${downloadName(current, response)}: it is an executable program; programs are not saved`);
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    const responseHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name)) continue;
      responseHeaders[name] = Array.isArray(value) ? value.join('\n') : value;
    }
    await route.fulfill({ status: response.statusCode ?? 502, headers: responseHeaders, body: content });
  } catch (error) {
    if (error instanceof TypeError && /Invalid URL/i.test(error.message)) await refuse('not a valid URL', true);
    else if (error instanceof BlockedUrlError) await refuse(error.message, true);
    else if (deadline.aborted) await refuse(`no response within ${formatSeconds(options.timeoutMs)}`, false);
    else await refuse(describeNetworkError(error), false);
  }
}

/** A program (ELF, PE, Mach-O) served as anything but text or script: never handed to the browser. */
function isProgram(content: Buffer, contentType: string): boolean {
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime.startsWith('text/') || mime.includes('javascript') || mime.includes('json') || mime.startsWith('image/')) return false;
  return looksExecutable(content.subarray(0, 8), '');
}

function downloadName(url: string, response: http.IncomingMessage): string {
  const disposition = String(response.headers['content-disposition'] ?? '');
  const quoted = /filename="([^"]{1,200})"/i.exec(disposition)?.[1];
  return safeDownloadName(quoted ?? new URL(url).pathname.split('/').pop() ?? 'download');
}

/** The request is for a tab's main frame (a popup's first request has no frame yet: not the active tab's document). */
function isMainFrame(route: Route): boolean {
  try {
    return route.request().frame().parentFrame() === null;
  } catch {
    return false;
  }
}

function open(url: URL, method: string, headers: Record<string, string>, body: Buffer | null, guard: SsrfGuard, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, { method, headers, agent: false, lookup: guard.lookup, signal });
    request.once('response', resolve);
    request.once('error', (error) => {
      // the guard's lookup refuses with a BlockedUrlError: keep it recognisable
      reject(error);
    });
    request.end(body ?? undefined);
  });
}
