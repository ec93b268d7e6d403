/**
 * HTTP plumbing of the SSE and Streamable HTTP test servers: command-line options, an optional required header
 * (to test that configured headers are sent), and the two transports of the MCP TypeScript SDK.
 *
 * Options: `--host 127.0.0.1` `--port <n>` (0 = any free port) `--require-header Name=Value` (repeatable).
 * Once listening the server writes `<name> listening on <url>` to stderr.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createTestServer, type TestServerOptions } from './tools';

export interface HttpServerOptions {
  host: string;
  port: number;
  /** header name (lower case) → value that every request must carry */
  requiredHeaders: Record<string, string>;
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

export function parseHttpArgs(argv: readonly string[], defaultPort: number): HttpServerOptions {
  const options: HttpServerOptions = { host: '127.0.0.1', port: defaultPort, requiredHeaders: {} };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    const value = argv[index + 1];
    if (value === undefined) throw new Error(`missing value after ${arg}`);
    if (arg === '--host') options.host = value;
    else if (arg === '--port') options.port = Number.parseInt(value, 10);
    else if (arg === '--require-header') {
      const eq = value.indexOf('=');
      if (eq < 1) throw new Error('--require-header expects Name=Value');
      options.requiredHeaders[value.slice(0, eq).toLowerCase()] = value.slice(eq + 1);
    } else throw new Error(`unknown option ${arg}`);
    index++;
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new Error('invalid --port');
  return options;
}

function hasRequiredHeaders(req: IncomingMessage, required: Record<string, string>): boolean {
  return Object.entries(required).every(([name, value]) => req.headers[name] === value);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function listen(server: Server, options: HttpServerOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closer(server: Server, cleanup: () => Promise<void>): () => Promise<void> {
  return async () => {
    await cleanup();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** The SSE transport: `GET /sse` opens a session, `POST /messages?sessionId=…` carries client messages. */
export async function startSseServer(tools: TestServerOptions, options: HttpServerOptions): Promise<RunningHttpServer> {
  const sessions = new Map<string, SSEServerTransport>();
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!hasRequiredHeaders(req, options.requiredHeaders)) {
        sendJson(res, 401, { error: 'missing or wrong required header' });
        return;
      }
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.on('close', () => sessions.delete(transport.sessionId));
        await createTestServer(tools).connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          sendJson(res, 404, { error: 'unknown session' });
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      sendJson(res, 404, { error: 'not found' });
    })().catch((error: unknown) => {
      process.stderr.write(`request failed: ${error instanceof Error ? error.message : String(error)}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
    });
  });
  const port = await listen(server, options);
  return {
    url: `http://${hostForUrl(options.host)}:${port}/sse`,
    close: closer(server, async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
    }),
  };
}

/** The Streamable HTTP transport at `/mcp`, with sessions. */
export async function startStreamableHttpServer(
  tools: TestServerOptions,
  options: HttpServerOptions,
): Promise<RunningHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!hasRequiredHeaders(req, options.requiredHeaders)) {
        sendJson(res, 401, { error: 'missing or wrong required header' });
        return;
      }
      if (url.pathname !== '/mcp') {
        sendJson(res, 404, { error: 'not found' });
        return;
      }
      const sessionHeader = req.headers['mcp-session-id'];
      const sessionId = typeof sessionHeader === 'string' ? sessionHeader : undefined;
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      let transport = sessionId ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== 'POST' || !isInitializeRequest(body)) {
          sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null });
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await createTestServer(tools).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      process.stderr.write(`request failed: ${error instanceof Error ? error.message : String(error)}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
    });
  });
  const port = await listen(server, options);
  return {
    url: `http://${hostForUrl(options.host)}:${port}/mcp`,
    close: closer(server, async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
    }),
  };
}

/** Runs a server from the command line until SIGINT/SIGTERM. */
export async function runHttpMain(
  name: string,
  start: (tools: TestServerOptions, options: HttpServerOptions) => Promise<RunningHttpServer>,
  tools: TestServerOptions,
  defaultPort: number,
): Promise<void> {
  const running = await start(tools, parseHttpArgs(process.argv.slice(2), defaultPort));
  process.stderr.write(`${name} listening on ${running.url}\n`);
  const stop = () => {
    void running.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
