/**
 * Chat → connections fan-out (openspec chat): every event of a chat goes to all connections subscribed to it; events of
 * a chat without subscribers are dropped; a closed connection loses all its subscriptions.
 *
 * Backpressure (openspec chat "Requirement: Backpressure"): a connection whose unsent buffer exceeds MAX_BUFFERED_BYTES
 * is a client that stopped reading; it is closed (1013, try again later) instead of letting the server buffer without
 * bound. The console reconnects and re-attaches.
 */
import type { ServerEvent } from '@cashcode/contracts';

/** What the fan-out needs from a client connection (the gateway adapts a `ws` WebSocket to it). */
export interface ChatConnection {
  readonly clientId: string;
  /** bytes queued but not yet sent */
  readonly bufferedAmount: number;
  readonly open: boolean;
  /**
   * Queues a frame. The frames of one tick go out together at the end of the tick; an `urgent` frame that starts a
   * tick is written at once (the first text of an answer reaches the client without waiting for the rest of the tick).
   */
  send(text: string, urgent: boolean): void;
  close(code: number, reason: string): void;
}

export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
export const SLOW_CLIENT_CLOSE_CODE = 1013;

export class ChatSubscriptions {
  private readonly byChat = new Map<string, Set<ChatConnection>>();
  private readonly byConnection = new Map<ChatConnection, Set<string>>();

  constructor(
    private readonly maxBufferedBytes = MAX_BUFFERED_BYTES,
    private readonly onSlowClient: (connection: ChatConnection) => void = () => undefined,
  ) {}

  subscribe(connection: ChatConnection, chatId: string): void {
    let connections = this.byChat.get(chatId);
    if (!connections) {
      connections = new Set();
      this.byChat.set(chatId, connections);
    }
    connections.add(connection);
    let chats = this.byConnection.get(connection);
    if (!chats) {
      chats = new Set();
      this.byConnection.set(connection, chats);
    }
    chats.add(chatId);
  }

  /** Removes every subscription of a connection (on close). */
  unsubscribeAll(connection: ChatConnection): void {
    const chats = this.byConnection.get(connection);
    if (!chats) return;
    this.byConnection.delete(connection);
    for (const chatId of chats) {
      const connections = this.byChat.get(chatId);
      if (!connections) continue;
      connections.delete(connection);
      if (connections.size === 0) this.byChat.delete(chatId);
    }
  }

  isSubscribed(connection: ChatConnection, chatId: string): boolean {
    return this.byChat.get(chatId)?.has(connection) ?? false;
  }

  subscriberCount(chatId: string): number {
    return this.byChat.get(chatId)?.size ?? 0;
  }

  chatsOf(connection: ChatConnection): string[] {
    return [...(this.byConnection.get(connection) ?? [])];
  }

  /** Sends an event of a chat to all its subscribers; returns how many received it. */
  publish(chatId: string, event: ServerEvent): number {
    const connections = this.byChat.get(chatId);
    if (!connections || connections.size === 0) return 0;
    const text = JSON.stringify(event);
    const urgent = event.event === 'delta';
    let delivered = 0;
    for (const connection of [...connections]) {
      if (this.sendText(connection, text, urgent)) delivered++;
    }
    return delivered;
  }

  /** Sends an event to one connection (replies to a frame), with the same backpressure rule. */
  send(connection: ChatConnection, event: ServerEvent): boolean {
    return this.sendText(connection, JSON.stringify(event), false);
  }

  private sendText(connection: ChatConnection, text: string, urgent: boolean): boolean {
    if (!connection.open) return false;
    if (connection.bufferedAmount > this.maxBufferedBytes) {
      this.unsubscribeAll(connection);
      this.onSlowClient(connection);
      connection.close(SLOW_CLIENT_CLOSE_CODE, 'client is not reading its messages');
      return false;
    }
    connection.send(text, urgent);
    return true;
  }
}
