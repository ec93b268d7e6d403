/**
 * The WebSocket transport of the chat (openspec chat): frames in, events out. Placement (own port or `/ws` on the HTTP
 * server), the 1 MiB payload cap and the Host/Origin/token checks on the upgrade belong to the app's WS adapter
 * (common/cashcode-ws-adapter.ts). Rules live in frame-parser.ts (validation) and ChatService (turns).
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { WebSocketGateway, type OnGatewayConnection, type OnGatewayDisconnect } from '@nestjs/websockets';
import type { Subscription } from 'rxjs';
import { WebSocket, type RawData } from 'ws';
import type { ServerEvent } from '@cashcode/contracts';
import { ElicitationsService } from '../agent/elicitations';
import { ApprovalsService } from '../approvals/approvals.service';
import { formatEvent } from '../common/log-format';
import { ChatService } from './chat.service';
import { parseFrame } from './frame-parser';
import { ChatSubscriptions, MAX_BUFFERED_BYTES, type ChatConnection } from './subscriptions';

/** protocol-level ping period; a client that missed the previous ping's pong is terminated (openspec http-platform) */
export const HEARTBEAT_INTERVAL_MS = 20_000;

/** The TCP socket under a WebSocket (the upgrade request's `socket`); only cork/uncork are used. */
interface CorkableSocket {
  readonly destroyed: boolean;
  cork(): void;
  uncork(): void;
}

/**
 * Adapts a `ws` WebSocket to what the fan-out needs.
 *
 * Frames sent in the same tick (the tool events of a tool round, the deltas of one network read of the model stream,
 * `stream_end` with `done`) are coalesced: the TCP socket is corked until a `process.nextTick` after the current
 * callback and its promise jobs, so they go out in one write. Only an urgent frame (a delta) that starts a tick is
 * written at once, so the first text of an answer is never delayed. A turn costs a handful of write system calls
 * instead of one per event.
 */
export class WsChatConnection implements ChatConnection {
  alive = true;
  private corked = false;

  constructor(
    readonly clientId: string,
    private readonly socket: WebSocket,
    /** the connection's TCP socket, from the upgrade request (null: write each frame at once) */
    private readonly raw: CorkableSocket | null,
  ) {}

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(text: string, urgent: boolean): void {
    if (this.corked) {
      this.socket.send(text);
      return;
    }
    if (urgent) this.socket.send(text);
    const raw = this.raw;
    if (raw && !raw.destroyed) {
      raw.cork();
      this.corked = true;
      process.nextTick(() => {
        this.corked = false;
        raw.uncork();
      });
    }
    if (!urgent) this.socket.send(text);
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  ping(): void {
    this.socket.ping();
  }

  terminate(): void {
    this.socket.terminate();
  }
}

@WebSocketGateway()
export class ChatGateway implements OnGatewayConnection<WebSocket>, OnGatewayDisconnect<WebSocket>, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ChatGateway.name);
  private readonly connections = new Map<WebSocket, WsChatConnection>();
  private readonly subscriptions = new ChatSubscriptions(MAX_BUFFERED_BYTES, (connection) =>
    this.logger.warn(formatEvent('ws.client.slow', { client_id: connection.clientId })),
  );
  private outbound: Subscription | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly chat: ChatService,
    private readonly approvals: ApprovalsService,
    private readonly elicitations: ElicitationsService,
  ) {}

  onModuleInit(): void {
    this.outbound = this.chat.events$.subscribe(({ chatId, event }) => this.subscriptions.publish(chatId, event));
    // an elicitation without a client following the chat is declined at once
    this.elicitations.setAudience((chatId) => this.subscriptions.subscriberCount(chatId) > 0);
    this.heartbeat = setInterval(() => this.checkHeartbeats(), HEARTBEAT_INTERVAL_MS);
    this.heartbeat.unref();
  }

  onModuleDestroy(): void {
    this.outbound?.unsubscribe();
    this.outbound = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** WebSocket connections open now (the operator metrics read it on scrape). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** On open: a client id and a fresh default chat (nothing on disk), subscribed, announced with `ready`. */
  handleConnection(socket: WebSocket, request?: IncomingMessage): void {
    const connection = new WsChatConnection(`client-${randomBytes(6).toString('hex')}`, socket, request?.socket ?? null);
    this.connections.set(socket, connection);
    const chatId = randomUUID();
    this.subscriptions.subscribe(connection, chatId);
    socket.on('pong', () => {
      connection.alive = true;
    });
    socket.on('message', (data: RawData, isBinary: boolean) => this.onFrame(connection, data, isBinary));
    this.logger.log(formatEvent('ws.client.connected', { client_id: connection.clientId }));
    this.reply(connection, { event: 'ready', chat_id: chatId, client_id: connection.clientId });
  }

  handleDisconnect(socket: WebSocket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    this.connections.delete(socket);
    this.subscriptions.unsubscribeAll(connection);
    this.logger.log(formatEvent('ws.client.disconnected', { client_id: connection.clientId }));
  }

  /** Whether a console connection follows the chat (it sees the chat's approval requests). */
  hasAudience(chatId: string): boolean {
    return this.subscriptions.subscriberCount(chatId) > 0;
  }

  /** An event for every open connection, whatever chat it follows (e.g. `automation_run`). */
  broadcast(event: ServerEvent): void {
    for (const connection of this.connections.values()) this.reply(connection, event);
  }

  private reply(connection: ChatConnection, event: ServerEvent): void {
    this.subscriptions.send(connection, event);
  }

  private onFrame(connection: WsChatConnection, data: RawData, isBinary: boolean): void {
    try {
      this.handleFrame(connection, data, isBinary);
    } catch (err) {
      // a frame must never take the process (or the connection) down
      this.logger.error(
        formatEvent('ws.frame.failed', {
          client_id: connection.clientId,
          error_type: err instanceof Error ? err.name : typeof err,
        }),
      );
    }
  }

  private handleFrame(connection: WsChatConnection, data: RawData, isBinary: boolean): void {
    const frame = parseFrame(data, isBinary);
    const clientId = connection.clientId;
    switch (frame.kind) {
      case 'ignore':
        this.logger.debug(formatEvent('ws.frame.rejected', { client_id: clientId, reason: frame.reason }));
        return;
      case 'reject':
        this.logger.debug(formatEvent('ws.frame.rejected', { client_id: clientId, reason: frame.reason }));
        this.reply(connection, frame.error);
        return;
      case 'ping':
        this.reply(connection, { event: 'pong' });
        return;
      case 'new_chat': {
        const chatId = randomUUID();
        this.subscriptions.subscribe(connection, chatId);
        this.logger.log(formatEvent('ws.chat.created', { client_id: clientId, chat_id: chatId }));
        this.reply(connection, { event: 'attached', chat_id: chatId });
        return;
      }
      case 'attach':
        // no existence check: unknown ids are fine (a reconnecting client re-attaches its open chat)
        this.subscriptions.subscribe(connection, frame.chatId);
        this.logger.log(formatEvent('ws.chat.attached', { client_id: clientId, chat_id: frame.chatId }));
        this.reply(connection, {
          event: 'attached',
          chat_id: frame.chatId,
          turn_active: this.chat.isRunning(frame.chatId),
        });
        // a reconnecting client (or a second tab) gets the running turn from its start, then what waits for an answer
        this.replayRunningTurn(connection, frame.chatId);
        return;
      case 'cancel': {
        // stop_ack first, then abort: the turn's stream_end/done follow the acknowledgement
        this.reply(connection, { event: 'stop_ack', chat_id: frame.chatId });
        const running = this.chat.cancel(frame.chatId);
        this.logger.log(
          formatEvent('ws.stop.accepted', { client_id: clientId, chat_id: frame.chatId, turn_running: running }),
        );
        return;
      }
      case 'approval':
        // the answering client follows the chat from now on (it gets approval_resolved like the others)
        this.subscriptions.subscribe(connection, frame.chatId);
        void this.approvals.decide(frame.chatId, frame.callId, frame.decision).then(
          (result) => {
            this.logger.log(
              formatEvent('ws.approval.received', {
                client_id: clientId,
                chat_id: frame.chatId,
                call_id: frame.callId,
                decision: frame.decision,
                accepted: result.ok,
              }),
            );
            if (!result.ok) this.reply(connection, { event: 'error', chat_id: frame.chatId, detail: result.detail, code: result.code });
          },
          (err: unknown) => {
            this.logger.error(formatEvent('ws.approval.failed', { client_id: clientId, error_type: err instanceof Error ? err.name : typeof err }));
            this.reply(connection, {
              event: 'error',
              chat_id: frame.chatId,
              detail: 'The approval could not be applied; answer again.',
              code: 'approval_failed',
            });
          },
        );
        return;
      case 'elicitation': {
        // like an approval: the answering client follows the chat (it gets elicitation_resolved like the others)
        this.subscriptions.subscribe(connection, frame.chatId);
        const result = this.elicitations.answer(frame.chatId, frame.elicitationId, frame.action, frame.content);
        this.logger.log(
          formatEvent('ws.elicitation.received', {
            client_id: clientId,
            chat_id: frame.chatId,
            action: frame.action,
            accepted: result.ok,
          }),
        );
        if (!result.ok) this.reply(connection, { event: 'error', chat_id: frame.chatId, detail: result.detail, code: result.code });
        return;
      }
      case 'chat_action': {
        this.subscriptions.subscribe(connection, frame.chatId);
        const { chatId, action, cursor, content, metadata } = frame;
        void this.chat.submitAction(chatId, { action, cursor, content, metadata }).then(
          (result) => {
            this.logger.log(
              formatEvent('ws.chat_action.received', {
                client_id: clientId,
                chat_id: chatId,
                action,
                accepted: result.accepted,
                ...(result.accepted ? {} : { reason: result.code }),
              }),
            );
            if (!result.accepted) this.reply(connection, { event: 'error', chat_id: chatId, detail: result.detail, code: result.code });
          },
          (err: unknown) => {
            this.logger.error(formatEvent('ws.chat_action.failed', { client_id: clientId, error_type: err instanceof Error ? err.name : typeof err }));
            this.reply(connection, { event: 'error', chat_id: chatId, detail: 'The action could not be started; try again.', code: 'internal_error' });
          },
        );
        return;
      }
      case 'message': {
        if (!this.subscriptions.isSubscribed(connection, frame.chatId)) {
          // a connection that starts following a chat with a running turn by sending to it sees that turn first
          this.subscriptions.subscribe(connection, frame.chatId);
          if (this.chat.isRunning(frame.chatId)) this.replayRunningTurn(connection, frame.chatId);
        }
        const result = this.chat.submit(frame.chatId, frame.content, frame.metadata, frame.attachments);
        if (!result.accepted) {
          this.logger.warn(
            formatEvent('ws.message.rejected', { client_id: clientId, chat_id: frame.chatId, reason: result.code }),
          );
          this.reply(connection, { event: 'error', chat_id: frame.chatId, detail: result.detail, code: result.code });
          return;
        }
        this.logger.log(
          formatEvent('ws.message.accepted', { client_id: clientId, chat_id: frame.chatId, queued: result.queued }),
        );
        return;
      }
    }
  }

  /**
   * Sends the running turn of a chat as one `turn_replay` (when a turn runs), then the approval and elicitation
   * requests still pending as standalone events (as the original protocol does; the replay leaves them out). Called
   * synchronously right after subscribing, so the live events that follow continue the replay with no gap and no
   * duplicate.
   */
  private replayRunningTurn(connection: ChatConnection, chatId: string): void {
    const approvals = this.approvals.pendingRequests(chatId);
    const elicitations = this.elicitations.pendingRequests(chatId);
    const log = this.chat.runningTurnLog(chatId);
    if (log) {
      const pendingCalls = new Set(approvals.map((pending) => pending.call_id));
      const pendingForms = new Set(elicitations.map((pending) => pending.elicitation_id));
      this.reply(
        connection,
        log.replay(
          (event) =>
            (event.event === 'approval_request' && pendingCalls.has(event.call_id)) ||
            (event.event === 'elicitation_request' && pendingForms.has(event.elicitation_id)),
        ),
      );
    }
    for (const pending of approvals) this.reply(connection, pending);
    for (const pending of elicitations) this.reply(connection, pending);
  }

  private checkHeartbeats(): void {
    for (const [socket, connection] of this.connections) {
      if (!connection.alive) {
        this.logger.log(formatEvent('ws.client.timed_out', { client_id: connection.clientId }));
        connection.terminate();
        this.handleDisconnect(socket);
        continue;
      }
      connection.alive = false;
      try {
        connection.ping();
      } catch {
        // a socket that is closing: its close event cleans up
      }
    }
  }
}
