import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { httpFetch } from './http-fetch';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{
  url: string;
  seen: Seen[];
  server: Server;
  close(): Promise<void>;
}> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('httpFetch', () => {
  it('Scenario: a JSON POST is sent in one request with its length, and the streamed answer reads like fetch', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(201, { 'content-type': 'text/event-stream', 'x-extra': 'yes' });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: two\n\n'), 20);
    });
    try {
      const body = JSON.stringify({ text: 'héllo — 你好' });
      const response = await httpFetch(`${s.url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body,
      });
      expect(response.status).toBe(201);
      expect(response.ok).toBe(true);
      expect(response.headers.get('x-extra')).toBe('yes');
      expect(response.url).toBe(`${s.url}/v1/chat`);
      expect(await response.text()).toBe('data: one\n\ndata: two\n\n');
      expect(s.seen).toHaveLength(1);
      expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat', body });
      expect(s.seen[0]!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
      expect(s.seen[0]!.headers['authorization']).toBe('Bearer k');
    } finally {
      await s.close();
    }
  });

  it('Scenario: redirects are followed like fetch (307 keeps the body, 303 becomes a GET, another origin loses the credentials)', async () => {
    const other = await serve((_req, res) => res.end('elsewhere'));
    const s = await serve((req, res) => {
      if (req.url === '/keep') res.writeHead(307, { location: '/target' }).end();
      else if (req.url === '/see-other') res.writeHead(303, { location: '/target' }).end();
      else if (req.url === '/away') res.writeHead(302, { location: `${other.url}/x` }).end();
      else res.end(`${req.method} ${req.url}`);
    });
    try {
      const kept = await httpFetch(`${s.url}/keep`, { method: 'POST', body: 'payload' });
      expect(await kept.text()).toBe('POST /target');
      expect(kept.redirected).toBe(true);
      expect(s.seen.at(-1)!.body).toBe('payload');

      const seeOther = await httpFetch(`${s.url}/see-other`, { method: 'POST', body: 'payload' });
      expect(await seeOther.text()).toBe('GET /target');
      expect(s.seen.at(-1)!.body).toBe('');

      const away = await httpFetch(`${s.url}/away`, { headers: { authorization: 'Bearer secret', 'x-keep': '1' } });
      expect(await away.text()).toBe('elsewhere');
      expect(other.seen[0]!.headers['authorization']).toBeUndefined();
      expect(other.seen[0]!.headers['x-keep']).toBe('1');
    } finally {
      await s.close();
      await other.close();
    }
  });

  it('Scenario: a gzip answer is decompressed', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(gzipSync(JSON.stringify({ data: [{ id: 'm1' }] })));
    });
    try {
      const response = await httpFetch(`${s.url}/v1/models`);
      expect(await response.json()).toEqual({ data: [{ id: 'm1' }] });
      expect(s.seen[0]!.headers['accept-encoding']).toContain('gzip');
    } finally {
      await s.close();
    }
  });

  it('Scenario: an abort before the answer rejects with an AbortError, one during the body errors the stream', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/slow') return; // never answers
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
    });
    try {
      const early = new AbortController();
      const pending = httpFetch(`${s.url}/slow`, { signal: early.signal });
      await new Promise((resolve) => setTimeout(resolve, 20));
      early.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

      const late = new AbortController();
      const response = await httpFetch(`${s.url}/stream`, { signal: late.signal });
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value!).toString()).toBe('first part');
      late.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });

      const already = new AbortController();
      already.abort();
      await expect(httpFetch(`${s.url}/stream`, { signal: already.signal })).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await s.close();
    }
  });

  it('Scenario: a body read slowly arrives whole, a connection reset errors it, and a cancelled body closes the connection', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 'x');
    const closed: string[] = [];
    const s = await serve((req, res) => {
      res.on('close', () => closed.push(req.url ?? ''));
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url === '/big') res.end(big);
      else if (req.url === '/reset') res.write('partial', () => setTimeout(() => req.socket.destroy(), 20));
      else res.write('never ends');
    });
    try {
      // the socket is paused while the reader is behind; everything still arrives, in order
      const reader = (await httpFetch(`${s.url}/big`)).body!.getReader();
      let received = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        expect(value!.every((byte: number) => byte === 0x78)).toBe(true);
        received += value!.length;
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(received).toBe(big.length);

      const reset = await httpFetch(`${s.url}/reset`);
      await expect(reset.text()).rejects.toThrow();

      const endless = await httpFetch(`${s.url}/endless`);
      const endlessReader = endless.body!.getReader();
      expect(Buffer.from((await endlessReader.read()).value!).toString()).toBe('never ends');
      await endlessReader.cancel();
      for (let i = 0; i < 100 && !closed.includes('/endless'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(closed).toContain('/endless');
    } finally {
      await s.close();
    }
  });

  it('Scenario: nothing listening rejects like undici: TypeError "fetch failed" with the socket error as cause', async () => {
    const s = await serve((_req, res) => res.end());
    const url = s.url;
    await s.close();
    const error = (await httpFetch(`${url}/v1/models`).catch((e: unknown) => e)) as TypeError & { cause?: { code?: string } };
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect(error.cause?.code).toBe('ECONNREFUSED');
  });

  it('Scenario: a 204 answer has no body and bodies of other types fall back to the global fetch', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/empty') res.writeHead(204).end();
      else res.end(`got ${req.headers['content-type'] ?? '-'}`);
    });
    try {
      const empty = await httpFetch(`${s.url}/empty`, { method: 'DELETE' });
      expect(empty.status).toBe(204);
      expect(empty.body).toBeNull();
      const form = new FormData();
      form.set('a', 'b');
      const multipart = await httpFetch(`${s.url}/form`, { method: 'POST', body: form });
      expect(await multipart.text()).toMatch(/^got multipart\/form-data; boundary=/);
    } finally {
      await s.close();
    }
  });
});
