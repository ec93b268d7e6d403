import { type INestApplicationContext, Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { createServer, type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { AppConfig } from '../config/app-config';
import {
  bearerToken,
  clientKey,
  cookieValues,
  isAllowedHost,
  isAllowedOrigin,
  sessionCookieName,
  type TokenVerifier,
  type TrustedProxies,
} from './http-security';
import { logIds } from './log-context';
import { formatEvent } from './log-format';
import { buildProblem } from './problem-details.filter';
import { PROBLEM_CONTENT_TYPE } from './problem-details';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';
import { matchesRoute, routePath } from './request-path';

/** Path of the gateway when it shares the HTTP server (WS_PORT === CASHCODE_PORT). */
export const WS_SHARED_PATH = '/ws';

/**
 * Largest WebSocket message accepted; bigger frames close the connection with 1009 before they are buffered whole.
 * Nesting inside an accepted frame is limited by the frame parser (json-limits.ts, an `error` event).
 */
export const WS_MAX_PAYLOAD = 1024 * 1024;

type UpgradeRejection = { status: number; detail: string; reason: string; headers?: Record<string, string> };

/**
 * The WebSocket adapter of the app. The gateway (`@WebSocketGateway()` with no options) is placed by configuration:
 * - `config.wsSharesHttp`: on the HTTP server, upgrades at `/ws` only;
 * - otherwise its own server on `config.wsHost:config.wsPort` (any path, as the original server accepted), never all
 *   interfaces.
 * Every upgrade is checked before the socket opens: Host allowlist (403), Origin allowlist (403), the API token
 * (`Authorization: Bearer` or `?token=` for browsers) or the console's session cookie, unless CASHCODE_AUTH=off (401,
 * 429 when throttled; the same verifier and client address as REST; the cookie is scoped by host, not port, so the
 * browser sends it to the gateway's own port too), then the path in shared mode (404). Messages are capped
 * at 1 MiB. Gateway-supplied port/path options are ignored (one endpoint, owned by configuration).
 */
export class CashcodeWsAdapter extends WsAdapter {
  private readonly log = new Logger('WebSocket');
  private gatewayServer: WebSocketServer | null = null;
  private ownServer: Server | null = null;
  private sharedServer: Server | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    this.handleUpgrade(request, socket, head);

  constructor(
    app: INestApplicationContext,
    private readonly config: AppConfig,
    private readonly verifier: TokenVerifier,
    private readonly trusted: TrustedProxies,
  ) {
    super(app);
  }

  override create(_port: number, _options?: Record<string, unknown>): WebSocketServer {
    if (this.gatewayServer) {
      throw new Error('CashCode supports one WebSocket gateway; its endpoint comes from configuration');
    }
    const server = new WebSocketServer({
      noServer: true,
      maxPayload: WS_MAX_PAYLOAD,
      perMessageDeflate: false,
      clientTracking: true,
    });
    this.bindErrorHandler(server);
    this.gatewayServer = server;
    return server;
  }

  /** The gateway's ws server once a gateway registered (null before / without one). */
  get server(): WebSocketServer | null {
    return this.gatewayServer;
  }

  /**
   * Starts accepting upgrades. Shared mode: attaches to the HTTP server (call before or after `app.listen`).
   * Own-port mode: listens on wsHost:wsPort and resolves with the bound address (rejects e.g. on EADDRINUSE).
   */
  async start(httpServer: Server): Promise<AddressInfo | null> {
    if (this.config.wsSharesHttp) {
      if (this.sharedServer !== httpServer) {
        this.sharedServer?.off('upgrade', this.onUpgrade);
        httpServer.on('upgrade', this.onUpgrade);
        this.sharedServer = httpServer;
      }
      return null;
    }
    if (this.ownServer) return this.ownServer.address() as AddressInfo;
    const server = createServer((request, response) => {
      const requestId = newRequestId();
      const body = buildProblem(
        { status: 426, detail: 'This port only accepts WebSocket connections' },
        { url: request.url },
        requestId,
      );
      response.writeHead(426, {
        'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
        [REQUEST_ID_HEADER]: requestId,
        Upgrade: 'websocket',
        Connection: 'Upgrade',
      });
      response.end(JSON.stringify(body));
    });
    server.on('upgrade', this.onUpgrade);
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      server.once('error', onError);
      server.listen(this.config.wsPort, this.config.wsHost, () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (error) => this.log.error(error));
    this.ownServer = server;
    return server.address() as AddressInfo;
  }

  override async dispose(): Promise<void> {
    this.sharedServer?.off('upgrade', this.onUpgrade);
    this.sharedServer = null;
    const own = this.ownServer;
    this.ownServer = null;
    if (own) {
      own.closeAllConnections();
      await new Promise<void>((resolve) => own.close(() => resolve()));
    }
    await super.dispose();
  }

  private check(request: IncomingMessage, path: string, query: URLSearchParams): UpgradeRejection | null {
    if (!isAllowedHost(request.headers.host, this.config)) {
      return { status: 403, detail: 'Host is not allowed', reason: 'host_not_allowed' };
    }
    if (!isAllowedOrigin(request.headers.origin, this.config, request.headers.host)) {
      return { status: 403, detail: 'Origin is not allowed', reason: 'origin_not_allowed' };
    }
    // The token before the path, as on REST: without it, no path (however spelled) tells whether an endpoint is there.
    if (this.verifier.enabled) {
      const key = clientKey(request, this.trusted);
      const presented = bearerToken(request.headers.authorization) ?? query.get('token') ?? undefined;
      const session = cookieValues(request.headers.cookie, sessionCookieName(this.config.port));
      const result = this.verifier.authenticate(presented, session, key);
      if (result === 'throttled') {
        return {
          status: 429,
          detail: 'Too many failed authentication attempts; try again later',
          reason: 'throttled',
          headers: { 'Retry-After': String(this.verifier.retryAfterSeconds(key)) },
        };
      }
      if (result === 'unauthorized') {
        return {
          status: 401,
          detail: 'Authentication required: a valid API token is missing',
          reason: 'unauthorized',
          headers: { 'WWW-Authenticate': 'Bearer' },
        };
      }
    }
    // On the shared HTTP server the gateway has one route, matched like the REST routes (exact, case-sensitive).
    if (this.config.wsSharesHttp && !matchesRoute(path, WS_SHARED_PATH)) {
      return { status: 404, detail: 'No WebSocket endpoint at this path', reason: 'unknown_path' };
    }
    if (!this.gatewayServer) {
      return { status: 503, detail: 'The WebSocket gateway is not available', reason: 'no_gateway' };
    }
    return null;
  }

  private handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const requestId = newRequestId();
    const path = routePath(request);
    const rawUrl = request.url ?? '';
    const queryStart = rawUrl.indexOf('?');
    const query = new URLSearchParams(queryStart === -1 ? '' : rawUrl.slice(queryStart + 1));
    const rejection = this.check(request, path, query);
    if (rejection) {
      this.log.warn(
        formatEvent('ws.upgrade.rejected', { reason: rejection.reason, status: rejection.status }),
        logIds({ requestId }),
      );
      this.reject(socket, rejection, path, requestId);
      return;
    }
    const server = this.gatewayServer;
    if (!server) return;
    server.handleUpgrade(request, socket, head, (ws) => server.emit('connection', ws, request));
  }

  private reject(socket: Duplex, rejection: UpgradeRejection, path: string, requestId: string): void {
    const body = JSON.stringify(buildProblem({ status: rejection.status, detail: rejection.detail }, { path }, requestId));
    const headers: Record<string, string> = {
      'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
      'Content-Length': String(Buffer.byteLength(body)),
      [REQUEST_ID_HEADER]: requestId,
      Connection: 'close',
      ...rejection.headers,
    };
    const head = [`HTTP/1.1 ${rejection.status} ${STATUS_CODES[rejection.status] ?? ''}`]
      .concat(Object.entries(headers).map(([key, value]) => `${key}: ${value}`))
      .join('\r\n');
    if (socket.writable) socket.end(`${head}\r\n\r\n${body}`);
    else socket.destroy();
  }
}
