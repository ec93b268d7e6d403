/**
 * A scriptable fake of Anthropic's Messages API, written from Anthropic's documented wire format: the only Anthropic
 * "model" the tests talk to, through the real `@anthropic-ai/sdk` over HTTP.
 *
 * - GET  /v1/models    → `{ data: [{ type: 'model', id, display_name, created_at }], has_more, first_id, last_id }`
 * - POST /v1/messages  → the next queued step (default: a plain "ok" answer). With `stream: true` the answer is a
 *   server-sent event stream: `message_start` (with the input usage), per content block `content_block_start`, its
 *   deltas (`thinking_delta` then `signature_delta`, `text_delta`, `input_json_delta`) and `content_block_stop`, a
 *   `ping`, then `message_delta` (`stop_reason`, output usage) and `message_stop`; a step may end in an `error` event
 *   instead. Without `stream` the whole message is one JSON body.
 * - Every request must carry the configured key (`x-api-key`, or `Authorization: Bearer`, which the current SDK sends)
 *   and an `anthropic-version` header, else 401 `authentication_error` (the documented error body
 *   `{ type: 'error', error: { type, message } }`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAnthropicToolUse {
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface FakeAnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export interface FakeAnthropicStep {
  /** answer text (streamed in pieces of 8 characters) */
  text?: string;
  /** a thinking block before the answer, with `signature` (default: a fixed fake signature) */
  thinking?: string;
  signature?: string;
  /** a redacted thinking block (opaque data) */
  redactedThinking?: string;
  toolUses?: FakeAnthropicToolUse[];
  /** default: `tool_use` with tool uses, else `end_turn` */
  stopReason?: string;
  usage?: FakeAnthropicUsage;
  /** HTTP error status with the documented error body of `errorType` */
  status?: number;
  errorType?: string;
  /** an `error` event after the text streamed so far (e.g. `overloaded_error`) */
  streamError?: string;
  chunkDelayMs?: number;
  /** never answer (until the client aborts or the server closes) */
  hang?: boolean;
  /** the exact events of the stream (`event:` name and `data:` JSON, as recorded) instead of the generated ones */
  rawEvents?: Array<{ event: string; data: Record<string, unknown> }>;
}

export interface AnthropicRecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** the raw body text (to compare requests byte by byte) */
  raw: string;
  body: Record<string, unknown> | null;
}

const DEFAULT_USAGE: FakeAnthropicUsage = { input_tokens: 12, output_tokens: 6 };
const FAKE_SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function pieces(text: string, size = 8): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export class FakeAnthropicServer {
  models: string[] = ['claude-sonnet-4-5', 'claude-haiku-4-5'];
  apiKey = 'sk-ant-test-0123456789';
  readonly requests: AnthropicRecordedRequest[] = [];
  private readonly queue: FakeAnthropicStep[] = [];
  private handler: ((request: AnthropicRecordedRequest) => FakeAnthropicStep | undefined) | null = null;
  private readonly open = new Set<ServerResponse>();
  private counter = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeAnthropicServer> {
    let instance: FakeAnthropicServer | null = null;
    const server = createServer((req, res) => void instance?.handle(req, res));
    server.keepAliveTimeout = 1000;
    instance = new FakeAnthropicServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  /** The base URL of the connection (the SDK adds `/v1/…`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `POST /v1/messages` requests only. */
  get messages(): AnthropicRecordedRequest[] {
    return this.requests.filter((request) => request.path === '/v1/messages');
  }

  enqueue(...steps: FakeAnthropicStep[]): this {
    this.queue.push(...steps);
    return this;
  }

  /** A function choosing the step per request (before the queue, when it returns a step). */
  setHandler(handler: ((request: AnthropicRecordedRequest) => FakeAnthropicStep | undefined) | null): this {
    this.handler = handler;
    return this;
  }

  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
    this.handler = null;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | null;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const record: AnthropicRecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, raw, body };
    this.requests.push(record);
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (key !== this.apiKey || typeof req.headers['anthropic-version'] !== 'string') {
      this.error(res, 401, 'authentication_error', 'invalid x-api-key');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      const data = this.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' }));
      this.json(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      const step = this.handler?.(record) ?? this.queue.shift() ?? { text: 'ok' };
      await this.answer(record, step, res);
      return;
    }
    this.error(res, 404, 'not_found_error', 'Not found');
  }

  private json(res: ServerResponse, status: number, payload: unknown): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${this.counter}` });
    res.end(JSON.stringify(payload));
  }

  private error(res: ServerResponse, status: number, type: string, message: string): void {
    this.json(res, status, { type: 'error', error: { type, message } });
  }

  private async answer(record: AnthropicRecordedRequest, step: FakeAnthropicStep, res: ServerResponse): Promise<void> {
    if (step.hang) return;
    if (step.status && step.status >= 400) {
      this.error(res, step.status, step.errorType ?? 'api_error', `fake error ${step.status}`);
      return;
    }
    const id = `msg_fake_${++this.counter}`;
    const model = typeof record.body?.['model'] === 'string' ? record.body['model'] : 'claude-sonnet-4-5';
    const usage = step.usage ?? DEFAULT_USAGE;
    const toolUses = (step.toolUses ?? []).map((use, index) => ({ id: use.id ?? `toolu_fake_${this.counter}_${index}`, ...use }));
    const text = step.text ?? (toolUses.length > 0 || step.thinking !== undefined || step.streamError ? '' : 'ok');
    const stopReason = step.stopReason ?? (toolUses.length > 0 ? 'tool_use' : 'end_turn');
    const content: Array<Record<string, unknown>> = [];
    if (step.thinking !== undefined) content.push({ type: 'thinking', thinking: step.thinking, signature: step.signature ?? FAKE_SIGNATURE });
    if (step.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: step.redactedThinking });
    if (text !== '') content.push({ type: 'text', text });
    for (const use of toolUses) content.push({ type: 'tool_use', id: use.id, name: use.name, input: use.input });
    const fullUsage = { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage };

    if (record.body?.['stream'] !== true) {
      this.json(res, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: fullUsage });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_fake_${this.counter}` });
    if (step.rawEvents) {
      for (const raw of step.rawEvents) {
        if (res.destroyed) return;
        res.write(`event: ${raw.event}\ndata: ${JSON.stringify(raw.data)}\n\n`);
      }
      res.end();
      return;
    }
    const send = async (event: string, data: Record<string, unknown>): Promise<boolean> => {
      if (res.destroyed) return false;
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
      if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
      return !res.destroyed;
    };
    const start = { ...fullUsage, output_tokens: 1 };
    if (!(await send('message_start', { message: { id, type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: start } }))) return;
    let index = 0;
    for (const block of content) {
      if (block['type'] === 'thinking') {
        if (!(await send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }))) return;
        for (const piece of pieces(block['thinking'] as string)) {
          if (!(await send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }))) return;
        }
        if (!(await send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block['signature'] } }))) return;
      } else if (block['type'] === 'redacted_thinking') {
        if (!(await send('content_block_start', { index, content_block: block }))) return;
      } else if (block['type'] === 'text') {
        if (!(await send('content_block_start', { index, content_block: { type: 'text', text: '' } }))) return;
        if (index === 0 && !(await send('ping', {}))) return;
        for (const piece of pieces(block['text'] as string)) {
          if (!(await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }))) return;
        }
        if (step.streamError) {
          await send('error', { error: { type: step.streamError, message: 'Overloaded' } });
          res.end();
          return;
        }
      } else if (block['type'] === 'tool_use') {
        if (!(await send('content_block_start', { index, content_block: { type: 'tool_use', id: block['id'], name: block['name'], input: {} } }))) return;
        for (const piece of pieces(JSON.stringify(block['input']), 6)) {
          if (!(await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }))) return;
        }
      }
      if (!(await send('content_block_stop', { index }))) return;
      index++;
    }
    if (step.streamError && !content.some((block) => block['type'] === 'text')) {
      await send('error', { error: { type: step.streamError, message: 'Overloaded' } });
      res.end();
      return;
    }
    if (!(await send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }))) return;
    await send('message_stop', {});
    res.end();
  }
}
