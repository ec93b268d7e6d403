/**
 * A `fetch` for the model providers built on node:http / node:https with keep-alive agents.
 *
 * Why not the global fetch (undici): a chat request carries the whole conversation, and undici's fetch turns a
 * string body into a web stream (a USV-string scan, a UTF-8 encode, a copy per chunk) and writes headers and body
 * separately. Here the body is encoded once and written with the headers in one go.
 *
 * Kept because it pays: 1.9 ms (18 %) less server CPU per turn under load than the SDK's default fetch (figures in
 * bench/README.md).
 * The rest of the server only sees a `fetch` (provider-client.ts passes it to the SDK); replacing it with
 * `globalThis.fetch` is a one-line change there (the redirect scenarios of test/llm-settings.e2e-spec.ts check that
 * the key never follows a redirect to another origin, whichever fetch is used).
 *
 * It implements what the `openai` SDK uses, with fetch's semantics:
 * - string / Uint8Array / ArrayBuffer / URLSearchParams bodies (anything else, or a Request input, goes to the global
 *   fetch unchanged);
 * - the AbortSignal: before the response the promise rejects with the signal's reason (an `AbortError` DOMException by
 *   default), after it the body stream errors with that reason;
 * - redirects are followed like fetch's default `redirect: 'follow'` (at most 20; 303, and 301/302 after a POST,
 *   become a GET without body; `authorization` and `cookie` are dropped when the origin changes);
 * - gzip / deflate / br response bodies are decompressed (and offered in `accept-encoding`, as fetch does);
 * - network failures reject with `TypeError('fetch failed', { cause })`, the shape undici uses, so the provider
 *   error classification sees the same `cause.code` (ECONNREFUSED, ECONNRESET, ...).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { finished, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';

const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const httpAgent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
const httpsAgent = new https.Agent({ keepAlive: true, scheduling: 'lifo' });

interface PreparedRequest {
  method: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The body as bytes, or `undefined` when this adapter does not handle its type. */
function encodeBody(body: RequestInit['body']): Buffer | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') {
    // an all-ASCII text (the usual JSON body) is its own UTF-8: copy it as Latin-1, several times faster
    return Buffer.from(body, Buffer.byteLength(body, 'utf8') === body.length ? 'latin1' : 'utf8');
  }
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return undefined;
}

function defaultContentType(body: RequestInit['body']): string | null {
  if (typeof body === 'string') return 'text/plain;charset=UTF-8';
  if (body instanceof URLSearchParams) return 'application/x-www-form-urlencoded;charset=UTF-8';
  return null;
}

/** The response's header lines as name/value pairs (the Response builds its Headers from them once). */
function responseHeaders(res: http.IncomingMessage): [string, string][] {
  const raw = res.rawHeaders;
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/**
 * The request head in `rawHeaders` form (name, value, name, value, ...): node:http writes it as given, without a
 * setHeader call per header (it still validates names and values). `host` is added as node:http would add it; Connection: keep-alive is
 * added by node:http itself.
 */
function requestHead(url: URL, request: PreparedRequest): string[] {
  const head: string[] = [];
  if (!('host' in request.headers)) head.push('host', url.host);
  for (const name in request.headers) {
    if (name !== 'content-length') head.push(name, request.headers[name]!);
  }
  if (request.body) head.push('content-length', String(request.body.length));
  else if (request.method !== 'GET' && request.method !== 'HEAD') head.push('content-length', '0');
  return head;
}

/** bytes of the response body queued for the reader before the socket is paused (a network read is at most 64 KiB) */
const BODY_HIGH_WATER_BYTES = 256 * 1024;

/**
 * The body as a web stream for the Response: chunks are handed over as they arrive, the socket is paused while more
 * than BODY_HIGH_WATER_BYTES wait for the reader (and resumed when it reads), the stream ends or errors with the body
 * (an abort's reason, a reset connection), and cancelling it destroys the body. Readable.toWeb does the same through
 * more general machinery that costs about twice as much per response.
 *
 * The queue is measured in bytes, not chunks: a chunked HTTP body (every SSE stream) gives one `data` event per chunk
 * of the transfer encoding, and a provider writes one per event, so one network read of a busy stream holds hundreds
 * of them. With a limit of 16 chunks the socket was paused and resumed (a tick each) every 16 events, and the text of
 * one read reached the client as ~18 `delta` events instead of one (chat/delta-coalescer.ts joins a tick's deltas):
 * `npm run bench -- server`'s load (300 events per answer in one write; interleaved passes on the 2-core VM) went from
 * 18 to 1 delta event per turn and from 6.6–7.5 ms (median 7.1) to 5.3–6.9 ms (median 5.7) of server CPU per turn.
 */
function webBody(body: Readable): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          if (settled) return;
          // a socket read (or a decoder's output) has its own memory, not a slice of Buffer's shared pool: it is
          // handed over as it is (Readable.toWeb copies every chunk in case it came from the pool)
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) body.pause();
        });
        finished(body, (error) => {
          if (settled) return;
          settled = true;
          if (error) controller.error(error);
          else controller.close();
        });
      },
      pull() {
        body.resume();
      },
      cancel() {
        settled = true;
        body.destroy();
      },
    },
    { highWaterMark: BODY_HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/** The response body, decompressed when it is gzip / deflate / br encoded. */
function decodeResponseBody(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  let decoder: Readable & NodeJS.WritableStream;
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = zlib.createGunzip(flush);
  else if (encoding === 'deflate') decoder = zlib.createInflate(flush);
  else if (encoding === 'br') {
    decoder = zlib.createBrotliDecompress({
      flush: zlib.constants.BROTLI_OPERATION_FLUSH,
      finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
    });
  } else return res;
  res.on('error', (error) => decoder.destroy(error));
  return res.pipe(decoder);
}

function send(url: URL, request: PreparedRequest, signal: AbortSignal | null, redirects: number): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const secure = url.protocol === 'https:';
    const req = (secure ? https : http).request(url, {
      method: request.method,
      headers: requestHead(url, request),
      agent: secure ? httpsAgent : httpAgent,
    });
    let settled = false;
    let body: Readable | null = null;
    const onAbort = () => {
      const reason = abortReason(signal!);
      if (!settled) {
        settled = true;
        reject(reason);
      }
      const error = reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
      body?.destroy(error);
      req.destroy(error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = () => signal?.removeEventListener('abort', onAbort);

    req.on('error', (error) => {
      cleanup();
      if (settled) return;
      settled = true;
      reject(new TypeError('fetch failed', { cause: error }));
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECT_STATUSES.has(status) && typeof location === 'string') {
        res.resume();
        cleanup();
        settled = true;
        if (redirects >= MAX_REDIRECTS) {
          reject(new TypeError('fetch failed', { cause: new Error('redirect count exceeded') }));
          return;
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch (error) {
          reject(new TypeError('fetch failed', { cause: error }));
          return;
        }
        const nextRequest: PreparedRequest = { ...request, headers: { ...request.headers } };
        if (status === 303 || ((status === 301 || status === 302) && request.method === 'POST')) {
          nextRequest.method = status === 303 && request.method === 'HEAD' ? 'HEAD' : 'GET';
          nextRequest.body = null;
          for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language']) {
            delete nextRequest.headers[name];
          }
        }
        if (next.origin !== url.origin) {
          delete nextRequest.headers['authorization'];
          delete nextRequest.headers['cookie'];
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          reject(new TypeError('fetch failed', { cause: new Error(`unsupported redirect to ${next.protocol}`) }));
          return;
        }
        send(next, nextRequest, signal, redirects + 1).then(resolve, reject);
        return;
      }
      res.on('close', cleanup);
      const nullBody = NULL_BODY_STATUSES.has(status) || request.method === 'HEAD';
      if (nullBody) res.resume();
      body = nullBody ? null : decodeResponseBody(res);
      let response: Response;
      try {
        response = new Response(body ? webBody(body) : null, {
          status,
          statusText: res.statusMessage ?? '',
          headers: responseHeaders(res),
        });
      } catch (error) {
        settled = true;
        res.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
        return;
      }
      Object.defineProperty(response, 'url', { value: url.href });
      if (redirects > 0) Object.defineProperty(response, 'redirected', { value: true });
      settled = true;
      resolve(response);
    });
    req.end(request.body ?? undefined);
  });
}

/** The provider `fetch`: node:http for what the SDK sends, the global fetch for anything else. */
export const httpFetch: typeof fetch = (input, init = {}) => {
  const body = encodeBody(init.body);
  const target = typeof input === 'string' ? input : input instanceof URL ? input.href : null;
  if (target === null || body === undefined || (init.redirect !== undefined && init.redirect !== 'follow')) {
    return globalThis.fetch(input, init);
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch (error) {
    return Promise.reject(new TypeError('Failed to parse URL', { cause: error }));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init);
  const headers: Record<string, string> = {};
  // the SDK passes a Headers: read it as it is instead of copying it into a new one first
  (init.headers instanceof Headers ? init.headers : new Headers(init.headers)).forEach((value, name) => {
    headers[name] = value;
  });
  if (!('content-type' in headers)) {
    const type = defaultContentType(init.body);
    if (type) headers['content-type'] = type;
  }
  headers['accept'] ??= '*/*';
  headers['accept-encoding'] ??= 'gzip, deflate, br';
  const method = (init.method ?? 'GET').toUpperCase();
  if ((method === 'GET' || method === 'HEAD') && body !== null) {
    return Promise.reject(new TypeError('Request with GET/HEAD method cannot have body.'));
  }
  return send(url, { method, headers, body }, init.signal ?? null, 0);
};
