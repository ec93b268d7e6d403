import { Injectable, InjectionToken, inject, signal } from '@angular/core';
import type { ClientFrame, ServerEvent } from '@cashcode/contracts';
import { Subject } from 'rxjs';

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'error';

/** The part of the browser WebSocket the console uses (tests provide a fake). */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type WebSocketFactory = (url: string) => SocketLike;

export const WEB_SOCKET_FACTORY = new InjectionToken<WebSocketFactory>('WEB_SOCKET_FACTORY', {
  providedIn: 'root',
  factory: () => (url: string) => new WebSocket(url),
});

export const RECONNECT_BASE_MS = 1_000;
export const RECONNECT_MAX_MS = 30_000;
const OPEN = 1;

/** Next reconnect delay: doubles from 1 s up to 30 s. */
export function nextReconnectDelay(current: number): number {
  return Math.min(current * 2, RECONNECT_MAX_MS);
}

/** Parses one text frame; anything that is not a JSON object with a string `event` is ignored (null). */
export function parseServerEvent(data: unknown): ServerEvent | null {
  if (typeof data !== 'string') return null;
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    if (typeof (value as { event?: unknown }).event !== 'string') return null;
    return value as ServerEvent;
  } catch {
    return null;
  }
}

/**
 * The single WebSocket connection to the ChatGateway. Reconnects after a close with a delay that starts at
 * 1 s and doubles up to 30 s (back to 1 s after a successful open). The gateway greets every new connection
 * with `ready`; the chat store re-attaches its open chats when it sees one.
 */
@Injectable({ providedIn: 'root' })
export class ChatSocket {
  private readonly factory = inject(WEB_SOCKET_FACTORY);
  private readonly connectionState = signal<ConnectionState>('disconnected');
  private readonly eventsSubject = new Subject<ServerEvent>();
  private socket: SocketLike | null = null;
  private url: string | null = null;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private delay = RECONNECT_BASE_MS;
  private stopped = true;

  readonly state = this.connectionState.asReadonly();
  readonly events = this.eventsSubject.asObservable();

  /** Delay the next reconnect attempt will wait (exposed for diagnostics and tests). */
  get reconnectDelay(): number {
    return this.delay;
  }

  connect(url: string): void {
    this.url = url;
    this.stopped = false;
    this.clearTimer();
    if (this.socket) return;
    this.open();
  }

  /** Sends a frame; false (and nothing sent) when the socket is not open. */
  send(frame: ClientFrame): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN) return false;
    socket.send(JSON.stringify(frame));
    return true;
  }

  /** Closes for good (no reconnect). */
  disconnect(): void {
    this.stopped = true;
    this.clearTimer();
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      this.detach(socket);
      socket.close();
    }
    this.connectionState.set('disconnected');
  }

  private open(): void {
    if (this.url === null) return;
    this.connectionState.set('connecting');
    let socket: SocketLike;
    try {
      socket = this.factory(this.url);
    } catch {
      this.connectionState.set('error');
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.delay = RECONNECT_BASE_MS;
      this.connectionState.set('connected');
    };
    socket.onmessage = (event: MessageEvent) => {
      if (this.socket !== socket) return;
      const parsed = parseServerEvent(event.data);
      if (parsed) this.eventsSubject.next(parsed);
    };
    socket.onerror = () => {
      if (this.socket !== socket) return;
      this.connectionState.set('error');
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.detach(socket);
      this.socket = null;
      if (this.connectionState() !== 'error') this.connectionState.set('disconnected');
      if (!this.stopped) this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    this.clearTimer();
    const wait = this.delay;
    this.delay = nextReconnectDelay(this.delay);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopped && !this.socket) this.open();
    }, wait);
  }

  private clearTimer(): void {
    if (this.reconnectTimer !== null) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = null;
    }
  }

  private detach(socket: SocketLike): void {
    socket.onopen = null;
    socket.onclose = null;
    socket.onerror = null;
    socket.onmessage = null;
  }
}
