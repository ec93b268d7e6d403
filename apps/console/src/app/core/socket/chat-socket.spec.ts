import { TestBed } from '@angular/core/testing';
import type { ServerEvent } from '@cashcode/contracts';

import {
  ChatSocket,
  RECONNECT_BASE_MS,
  RECONNECT_MAX_MS,
  WEB_SOCKET_FACTORY,
  nextReconnectDelay,
  parseServerEvent,
  type SocketLike,
} from './chat-socket';

class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  readonly sent: string[] = [];

  constructor(readonly url: string) {}

  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }
  receive(data: unknown): void {
    this.onmessage?.(new MessageEvent('message', { data }));
  }
  fail(): void {
    this.onerror?.(new Event('error'));
    this.drop();
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.(new CloseEvent('close'));
  }
}

describe('ChatSocket', () => {
  let sockets: FakeSocket[];
  let socket: ChatSocket;

  beforeEach(() => {
    vi.useFakeTimers();
    sockets = [];
    TestBed.configureTestingModule({
      providers: [
        {
          provide: WEB_SOCKET_FACTORY,
          useValue: (url: string) => {
            const fake = new FakeSocket(url);
            sockets.push(fake);
            return fake;
          },
        },
      ],
    });
    socket = TestBed.inject(ChatSocket);
  });

  afterEach(() => {
    socket.disconnect();
    vi.useRealTimers();
  });

  it('Scenario: connect moves from connecting to connected', () => {
    socket.connect('ws://127.0.0.1:8765/');
    expect(socket.state()).toBe('connecting');
    expect(sockets[0].url).toBe('ws://127.0.0.1:8765/');
    sockets[0].open();
    expect(socket.state()).toBe('connected');
  });

  it('Scenario: reconnect waits 1 s, then doubles up to 30 s', () => {
    socket.connect('ws://x/');
    const waits: number[] = [];
    for (let attempt = 0; attempt < 7; attempt++) {
      const current = sockets[sockets.length - 1];
      const wait = socket.reconnectDelay;
      current.drop();
      expect(socket.state()).toBe('disconnected');
      const before = sockets.length;
      // not a moment earlier
      vi.advanceTimersByTime(wait - 1);
      expect(sockets.length).toBe(before);
      vi.advanceTimersByTime(1);
      expect(sockets.length).toBe(before + 1);
      expect(socket.state()).toBe('connecting');
      waits.push(wait);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('Scenario: a successful open resets the backoff to 1 s', () => {
    socket.connect('ws://x/');
    sockets[0].drop();
    vi.advanceTimersByTime(1000);
    sockets[1].drop();
    vi.advanceTimersByTime(2000);
    expect(socket.reconnectDelay).toBe(4000);
    sockets[2].open();
    expect(socket.reconnectDelay).toBe(RECONNECT_BASE_MS);
    sockets[2].drop();
    vi.advanceTimersByTime(1000);
    expect(sockets.length).toBe(4);
  });

  it('Scenario: an error shows the error state and still reconnects', () => {
    socket.connect('ws://x/');
    sockets[0].fail();
    expect(socket.state()).toBe('error');
    vi.advanceTimersByTime(1000);
    expect(sockets.length).toBe(2);
    sockets[1].open();
    expect(socket.state()).toBe('connected');
  });

  it('Scenario: send returns false when the socket is not open', () => {
    socket.connect('ws://x/');
    expect(socket.send({ type: 'new_chat' })).toBe(false);
    sockets[0].open();
    expect(socket.send({ type: 'new_chat' })).toBe(true);
    expect(sockets[0].sent).toEqual(['{"type":"new_chat"}']);
    sockets[0].drop();
    expect(socket.send({ type: 'ping' })).toBe(false);
  });

  it('Scenario: unparsable frames are ignored', () => {
    const received: ServerEvent[] = [];
    socket.events.subscribe((event) => received.push(event));
    socket.connect('ws://x/');
    sockets[0].open();
    sockets[0].receive('not json');
    sockets[0].receive('[1,2]');
    sockets[0].receive('{"no_event":true}');
    sockets[0].receive(new Blob(['{}']));
    sockets[0].receive('{"event":"pong"}');
    expect(received).toEqual([{ event: 'pong' }]);
  });

  it('disconnect stops reconnecting', () => {
    socket.connect('ws://x/');
    sockets[0].open();
    socket.disconnect();
    vi.advanceTimersByTime(RECONNECT_MAX_MS * 2);
    expect(sockets.length).toBe(1);
    expect(socket.state()).toBe('disconnected');
  });
});

describe('reconnect helpers', () => {
  it('doubles the delay and caps it at 30 s', () => {
    expect(nextReconnectDelay(1000)).toBe(2000);
    expect(nextReconnectDelay(16000)).toBe(30000);
    expect(nextReconnectDelay(30000)).toBe(30000);
  });

  it('parses only JSON objects with a string event', () => {
    expect(parseServerEvent('{"event":"ready","chat_id":"a","client_id":"b"}')).toEqual({
      event: 'ready',
      chat_id: 'a',
      client_id: 'b',
    });
    expect(parseServerEvent('{"event":1}')).toBeNull();
    expect(parseServerEvent('null')).toBeNull();
    expect(parseServerEvent(42)).toBeNull();
  });
});
