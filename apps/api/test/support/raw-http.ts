/**
 * HTTP requests and WebSocket upgrades with the request target sent exactly as given (`/api//x`, `/%61pi`, `/API`,
 * absolute-form `http://host/x`): clients that parse URLs would normalise some of these spellings away.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends one request to `baseUrl`'s host and port with `target` as the literal request target. */
export function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: target, headers: { ...headers, Connection: 'close' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

export type RawUpgrade = { opened: true } | { opened: false; status: number; headers: IncomingHttpHeaders; body: string };

/**
 * Sends a WebSocket upgrade request for the literal `target`; resolves with whether the server switched protocols
 * (the socket is then closed at once) or with the refusal.
 */
export function rawUpgrade(baseUrl: string, target: string, headers: Record<string, string> = {}): Promise<RawUpgrade> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'GET',
      path: target,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ opened: true });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ opened: false, status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}
