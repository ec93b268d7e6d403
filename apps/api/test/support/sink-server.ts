/**
 * A real HTTP server on 127.0.0.1 that records every request it receives (method, path, headers) — used to prove
 * where secrets go. By default it answers an OpenAI-style model list on any path ending in `/models` and `{}`
 * elsewhere; `respond` can script redirects or other answers.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface SinkAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export class SinkServer {
  readonly requests: SinkRequest[] = [];
  /** chooses the answer per request; undefined → the default answer */
  respond: ((request: SinkRequest) => SinkAnswer | undefined) | null = null;
  models = ['sink-model'];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<SinkServer> {
    let sink: SinkServer | null = null;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const record: SinkRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers };
        sink!.requests.push(record);
        const answer = sink!.respond?.(record) ?? sink!.defaultAnswer(record);
        const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(body);
      });
    });
    server.keepAliveTimeout = 1000;
    sink = new SinkServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** http://127.0.0.1:PORT */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** the same server under another origin: http://localhost:PORT */
  get localhostOrigin(): string {
    return `http://localhost:${this.port}`;
  }

  /** every Authorization header received (undefined when a request had none) */
  get authorizations(): Array<string | undefined> {
    return this.requests.map((request) => request.headers.authorization);
  }

  /** whether any request carried `value` in any header */
  sawHeaderValue(value: string): boolean {
    return this.requests.some((request) =>
      Object.values(request.headers).some((header) => (Array.isArray(header) ? header.join(',') : (header ?? '')).includes(value)),
    );
  }

  reset(): void {
    this.requests.length = 0;
    this.respond = null;
    this.models = ['sink-model'];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private defaultAnswer(request: SinkRequest): SinkAnswer {
    if (request.path.split('?')[0]!.endsWith('/models')) {
      return { status: 200, body: { object: 'list', data: this.models.map((id) => ({ id, object: 'model' })) } };
    }
    return { status: 200, body: {} };
  }
}
