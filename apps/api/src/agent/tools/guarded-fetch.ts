/**
 * A GET for untrusted URLs (SECURITY.md, "SSRF guard of web_fetch"): every hop checked by the SsrfGuard (literal IPs
 * before connecting, names at connect time through the guard's `lookup`), redirects followed by hand (at most 5, each
 * re-checked), one deadline covering connect, headers and body of every hop, a byte cap on the raw and the decompressed
 * body.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { BlockedUrlError, type SsrfGuard } from './ssrf-guard';

export type FetchFailureKind = 'timeout' | 'http' | 'blocked' | 'network' | 'redirects' | 'cancelled';

export class FetchFailure extends Error {
  constructor(
    readonly kind: FetchFailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'FetchFailure';
  }
}

export interface GuardedFetchOptions {
  guard: SsrfGuard;
  timeoutMs: number;
  /** bytes of body kept (raw and decompressed) */
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  accept?: string;
  signal: AbortSignal;
}

export interface FetchedBody {
  /** the URL of the final hop */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** true when the body was cut at maxBytes */
  truncated: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface OpenResponse {
  response: http.IncomingMessage;
  request: http.ClientRequest;
}

/** A network error as a short message without host paths (duck-typed: Node errors may come from another realm). */
export function describeNetworkError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const record = error as { code?: unknown; message?: unknown };
  const code = typeof record.code === 'string' ? record.code : undefined;
  const message = typeof record.message === 'string' ? record.message : 'network error';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return message.startsWith('could not resolve') ? message : 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate error (${code})`;
    default:
      return code ? `${message} (${code})` : message;
  }
}

/** Fetches `startUrl` under the guard. Throws FetchFailure. */
export async function guardedFetch(startUrl: URL, options: GuardedFetchOptions): Promise<FetchedBody> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new FetchFailure('timeout', 'timed out')), options.timeoutMs);
  const onCancel = () => deadline.abort(new FetchFailure('cancelled', 'cancelled'));
  if (options.signal.aborted) onCancel();
  else options.signal.addEventListener('abort', onCancel, { once: true });
  const failure = (error: unknown): FetchFailure => {
    if (deadline.signal.aborted && deadline.signal.reason instanceof FetchFailure) return deadline.signal.reason;
    if (error instanceof FetchFailure) return error;
    if (error instanceof BlockedUrlError) return new FetchFailure('blocked', error.message);
    return new FetchFailure('network', describeNetworkError(error));
  };
  try {
    let url = startUrl;
    for (let hop = 0; ; hop += 1) {
      options.guard.checkUrl(url);
      const { response, request } = await openOnce(url, options, deadline.signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location) {
        response.resume();
        request.destroy();
        if (hop >= options.maxRedirects) {
          throw new FetchFailure('redirects', `too many redirects (more than ${options.maxRedirects})`);
        }
        try {
          url = new URL(location, url);
        } catch {
          throw new FetchFailure('network', 'invalid redirect location');
        }
        continue;
      }
      if (status < 200 || status >= 300) {
        response.resume();
        request.destroy();
        throw new FetchFailure('http', `HTTP error ${status}`, status);
      }
      const { body, truncated } = await readBody(response, options.maxBytes, deadline.signal);
      request.destroy();
      return {
        url: url.toString(),
        status,
        contentType: String(response.headers['content-type'] ?? ''),
        body,
        truncated,
      };
    }
  } catch (error) {
    throw failure(error);
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onCancel);
  }
}

function openOnce(url: URL, options: GuardedFetchOptions, signal: AbortSignal): Promise<OpenResponse> {
  return new Promise<OpenResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: options.guard.lookup,
      headers: {
        'User-Agent': options.userAgent,
        Accept: options.accept ?? 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8',
        'Accept-Encoding': 'gzip, deflate, br',
      },
    });
    const onAbort = () => request.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    request.once('response', (response) => {
      signal.removeEventListener('abort', onAbort);
      resolve({ response, request });
    });
    request.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    request.end();
  });
}

function decoderFor(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/** Reads the (decompressed) body up to maxBytes; stops reading there. Decompression is bounded the same way. */
export function readBody(
  response: http.IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const encoding = String(response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    let source: Readable = response;
    if (encoding !== 'identity' && encoding !== '') {
      const decoder = decoderFor(encoding);
      if (decoder === null) {
        response.destroy();
        reject(new FetchFailure('network', `unsupported content encoding ${encoding}`));
        return;
      }
      let rawBytes = 0;
      response.on('data', (chunk: Buffer) => {
        rawBytes += chunk.length;
        if (rawBytes > maxBytes) response.destroy();
      });
      response.on('error', (error) => decoder.destroy(error));
      response.pipe(decoder);
      source = decoder;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      resolve({ body: Buffer.concat(chunks), truncated });
    };
    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      reject(error);
    };
    const onAbort = () => {
      response.destroy();
      source.destroy();
      fail(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    source.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        response.destroy();
        source.destroy();
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    source.on('end', () => finish(false));
    source.on('error', (error) => {
      if (done) return;
      fail(source === response ? error : new FetchFailure('network', 'the response could not be decompressed'));
    });
    source.on('close', () => {
      // a raw body cut at maxBytes while compressed ends here without 'end'
      if (!done) {
        if (response.destroyed && size > 0) finish(true);
        else if (!response.complete) fail(new FetchFailure('network', 'the connection closed before the body was complete'));
        else finish(false);
      }
    });
  });
}
