/**
 * A real `ws` client for e2e tests: collects every server event in order and waits for events by name or predicate
 * (no sleeps). Frames can be sent as objects, raw text or binary.
 */
import WebSocket from 'ws';
import type { ServerEvent, ServerEventName } from '@cashcode/contracts';

export type EventOf<N extends ServerEventName> = Extract<ServerEvent, { event: N }>;
type Predicate = (event: ServerEvent) => boolean;

interface Waiter {
  matches: Predicate;
  /** index in `events` from which to look */
  from: number;
  resolve: (event: ServerEvent) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export interface WsTestClientOptions {
  origin?: string;
  headers?: Record<string, string>;
  /** default wait timeout */
  timeoutMs?: number;
}

export class WsTestClient {
  readonly events: ServerEvent[] = [];
  /** arrival time (performance.now()) of each event, same index as `events` */
  readonly arrivals: number[] = [];
  closeCode: number | null = null;
  private readonly waiters: Waiter[] = [];
  private readonly closeWaiters: Array<() => void> = [];

  private constructor(
    readonly socket: WebSocket,
    private readonly timeoutMs: number,
  ) {
    socket.on('message', (data: WebSocket.RawData) => {
      let event: ServerEvent;
      try {
        event = JSON.parse(data.toString()) as ServerEvent;
      } catch {
        return;
      }
      this.events.push(event);
      this.arrivals.push(performance.now());
      for (const waiter of [...this.waiters]) {
        if (waiter.matches(event)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          clearTimeout(waiter.timer);
          waiter.resolve(event);
        }
      }
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      for (const resolve of this.closeWaiters.splice(0)) resolve();
      for (const waiter of this.waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`socket closed (${code}) while waiting for an event`));
      }
    });
  }

  /** Connects and waits for the `ready` event. */
  static async connect(url: string, options: WsTestClientOptions = {}): Promise<WsTestClient> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.origin) headers['origin'] = options.origin;
    const socket = new WebSocket(url, { headers });
    const client = new WsTestClient(socket, options.timeoutMs ?? 10_000);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    // `ready` may already be in `events` (received right after open): waitFor looks at past events too
    await client.waitFor('ready');
    return client;
  }

  get ready(): EventOf<'ready'> {
    return this.events.find((e) => e.event === 'ready') as EventOf<'ready'>;
  }

  get chatId(): string {
    return this.ready.chat_id;
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** Sends a chat message with the given LLM selection. */
  sendMessage(chatId: string, content: string, llm = { provider: 'openai_compatible', model: 'fake-model' }): void {
    this.send({ type: 'message', chat_id: chatId, content, metadata: { llm } });
  }

  /** The next event with this name arriving after now. */
  next<N extends ServerEventName>(name: N, where?: (event: EventOf<N>) => boolean, timeoutMs?: number): Promise<EventOf<N>> {
    return this.waitFrom(this.events.length, name, where, timeoutMs);
  }

  /** The first event with this name (already received or still to come). */
  waitFor<N extends ServerEventName>(
    name: N,
    where?: (event: EventOf<N>) => boolean,
    timeoutMs?: number,
  ): Promise<EventOf<N>> {
    return this.waitFrom(0, name, where, timeoutMs);
  }

  /** Waits until `count` events with this name (and predicate) have arrived in total. */
  async waitForCount<N extends ServerEventName>(
    name: N,
    count: number,
    where?: (event: EventOf<N>) => boolean,
    timeoutMs?: number,
  ): Promise<EventOf<N>[]> {
    const matching = () => this.ofType(name).filter((e) => !where || where(e));
    while (matching().length < count) {
      await this.next(name, where, timeoutMs);
    }
    return matching();
  }

  /** Waits until the chat's deltas so far join to `text` or more (deltas of one tick arrive as one event). */
  async waitForText(chatId: string, text: string, timeoutMs?: number): Promise<void> {
    while (!joinedDeltas(this.chatEvents(chatId)).startsWith(text)) {
      await this.next('delta', (e) => e.chat_id === chatId, timeoutMs);
    }
  }

  ofType<N extends ServerEventName>(name: N): EventOf<N>[] {
    return this.events.filter((e) => e.event === name) as EventOf<N>[];
  }

  /** Events of one chat, excluding ready/attached/pong. */
  chatEvents(chatId: string): ServerEvent[] {
    return this.events.filter((e) => 'chat_id' in e && e.chat_id === chatId && e.event !== 'ready' && e.event !== 'attached');
  }

  waitForClose(timeoutMs = this.timeoutMs): Promise<number> {
    if (this.closeCode !== null) return Promise.resolve(this.closeCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('socket did not close')), timeoutMs);
      this.closeWaiters.push(() => {
        clearTimeout(timer);
        resolve(this.closeCode as number);
      });
    });
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    const closed = this.waitForClose();
    this.socket.close();
    await closed.catch(() => this.socket.terminate());
  }

  private waitFrom<N extends ServerEventName>(
    from: number,
    name: N,
    where: ((event: EventOf<N>) => boolean) | undefined,
    timeoutMs = this.timeoutMs,
  ): Promise<EventOf<N>> {
    const matches: Predicate = (event) => event.event === name && (!where || where(event as EventOf<N>));
    const existing = this.events.slice(from).find(matches);
    if (existing) return Promise.resolve(existing as EventOf<N>);
    if (this.closeCode !== null) return Promise.reject(new Error(`socket closed before '${name}'`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        const seen = this.events
          .map((e) => (e.event === 'error' ? `error(${e.code ?? ''}: ${e.detail})` : e.event))
          .join(', ');
        reject(new Error(`timed out waiting for '${name}' (seen: ${seen})`));
      }, timeoutMs);
      const waiter: Waiter = {
        matches,
        from,
        resolve: (event) => resolve(event as EventOf<N>),
        reject,
        timer,
      };
      this.waiters.push(waiter);
    });
  }
}

/** Saves LLM settings pointing the openai_compatible provider at a fake model server (through the real REST API). */
export async function configureFakeModel(httpUrl: string, fakeBaseUrl: string): Promise<void> {
  const response = await fetch(`${httpUrl}/api/settings/llm`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      openai_compatible: { base_url: fakeBaseUrl, api_key: 'sk-test-fake-key-0123456789' },
      ollama: { base_url: '' },
    }),
  });
  if (response.status !== 200) throw new Error(`PUT /api/settings/llm → ${response.status}: ${await response.text()}`);
}

/**
 * Sets tool policies through the real REST API (`PUT /api/settings/tool-policies`). Suites about what tools do, not
 * about approvals, use it to let `exec` and MCP tools run without asking: `allowToolsWithoutAsking(httpUrl)`.
 */
export async function putToolPolicies(httpUrl: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${httpUrl}/api/settings/tool-policies`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`PUT /api/settings/tool-policies → ${response.status}: ${await response.text()}`);
}

export function allowToolsWithoutAsking(httpUrl: string): Promise<void> {
  return putToolPolicies(httpUrl, { defaults: { exec: 'allow', mcp: 'allow' } });
}

/** The text of the deltas among `events`, joined. */
export function joinedDeltas(events: readonly ServerEvent[]): string {
  return events.map((e) => (e.event === 'delta' ? e.text : '')).join('');
}

/**
 * Event names with each run of consecutive deltas shown as one `delta`: the deltas of one tick leave as one event, so
 * how many arrive depends on how the model's chunks were read.
 */
export function eventNamesCollapsed(events: readonly ServerEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) if (event.event !== 'delta' || out[out.length - 1] !== 'delta') out.push(event.event);
  return out;
}
