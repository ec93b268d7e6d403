/**
 * A scriptable fake OpenAI-compatible model server: the only "model" any test or benchmark talks to.
 *
 * - GET  /v1/models                 → { data: [{ id }] } from `models` (or a scripted error via `modelsStep`)
 * - POST /v1/chat/completions       → the next queued step (default: a plain "ok" answer), streamed as SSE when the
 *                                     request has `stream: true`, with tool-call arguments split across chunks and a
 *                                     final usage chunk when `stream_options.include_usage` is set.
 * Steps can delay, stream slowly, hang until the client goes away, or answer with an HTTP error (401/429/500 …).
 *
 * Reasoning models, as their providers document the stream: `reasoning` is streamed before the answer as
 * `delta.reasoning_content` (DeepSeek, vLLM, llama.cpp) or `delta.reasoning` (OpenRouter, newer vLLM, Ollama), or
 * inside the content as a leading `<think>…</think>` block (`reasoningAs: 'think'`, Qwen3). `rawChunks` sends exact
 * `data:` payloads for what real servers do beyond that (tool calls without ids, arguments as objects, an error object
 * inside a 200 stream, no `[DONE]`, …); `rawSse` the exact body text (comments, other fields, CRLF).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  /** DeepSeek's name for the cached prompt tokens */
  prompt_cache_hit_tokens?: number;
}

export interface FakeStep {
  /** final text (split into `chunks` of ~8 chars when streaming unless `chunks` is given) */
  content?: string;
  /** exact content chunks to stream */
  chunks?: string[];
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** stream no usage chunk even when asked (a provider that reports no usage) */
  omitUsage?: boolean;
  /** HTTP error status (e.g. 401, 429, 500); the body is `errorBody` or an OpenAI-style error */
  status?: number;
  errorBody?: unknown;
  headers?: Record<string, string>;
  /** delay before the response headers */
  delayMs?: number;
  /** delay between streamed chunks */
  chunkDelayMs?: number;
  /** characters of tool-call arguments per streamed chunk (default 5; large for arguments of a MiB) */
  argumentChunkChars?: number;
  /** never answer (until the client aborts or the server closes) */
  hang?: boolean;
  /** stream the content chunks, then hang without finishing (for cancel tests) */
  hangAfterChunks?: boolean;
  /** send the whole streamed response in one socket write (as a loaded provider's stream often arrives) */
  oneWrite?: boolean;
  /** reasoning streamed before the answer (see `reasoningAs`) */
  reasoning?: string;
  /** how the reasoning is streamed: `reasoning_content` (default), `reasoning`, or a `<think>` block in the content */
  reasoningAs?: 'reasoning_content' | 'reasoning' | 'think';
  /** `finish_reason` of the last choice (default `tool_calls` / `stop`; null: none is sent) */
  finishReason?: string | null;
  /** end the stream without `data: [DONE]` (the socket just closes) */
  omitDone?: boolean;
  /** exact `data:` payloads (JSON values) instead of the generated stream; `[DONE]` follows unless `omitDone` */
  rawChunks?: unknown[];
  /**
   * the exact body text of the stream, each element one write (SSE as a server recorded it: comments, CRLF line
   * ends, fields other than `data:`); nothing is added, `[DONE]` included
   */
  rawSse?: string[];
  /** answer this JSON body (`application/json`, status 200) even to a streaming request: a server ignoring `stream` */
  wholeBody?: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** set when the client closed the connection before the response finished */
  aborted: boolean;
  /** performance.now() when the request arrived */
  receivedAt: number;
  /** performance.now() when the first content chunk was written (streaming only) */
  firstContentChunkAt?: number;
}

type StepHandler = (request: RecordedRequest) => FakeStep | undefined;

const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function splitText(text: string, size: number): string[] {
  if (!/[\uD800-\uDFFF]/.test(text)) {
    // no surrogates: code units are code points, and slicing is cheap on arguments of a MiB
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export class FakeModelServer {
  models: string[] = ['fake-model'];
  /** extra fields of a model's `/v1/models` entry, by id (e.g. `{ capabilities: ['vision'] }`) */
  modelFields: Record<string, Record<string, unknown>> = {};
  /** when set, GET /v1/models answers with this step's status/error instead */
  modelsStep: FakeStep | null = null;
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeStep[] = [];
  private handler: StepHandler | null = null;
  private readonly openResponses = new Set<ServerResponse>();
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];
  private completionCounter = 0;
  private readonly abortWaiters = new Map<RecordedRequest, Array<() => void>>();

  private constructor(private readonly server: Server) {}

  static async start(port = 0): Promise<FakeModelServer> {
    let instance: FakeModelServer | null = null;
    const server = createServer((req, res) => {
      void instance?.handle(req, res);
    });
    server.keepAliveTimeout = 1000;
    instance = new FakeModelServer(server);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return instance;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1 */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Ollama-style base URL (the server adds /v1 itself). */
  get rootUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  enqueue(...steps: FakeStep[]): this {
    this.queue.push(...steps);
    return this;
  }

  /** A function choosing the step per request (takes precedence over the queue when it returns a step). */
  setHandler(handler: StepHandler | null): this {
    this.handler = handler;
    return this;
  }

  /** Chat-completion requests only. */
  get completions(): RecordedRequest[] {
    return this.requests.filter((r) => r.path.endsWith('/chat/completions'));
  }

  /** Resolves once at least `count` chat-completion requests have been received. */
  waitForRequests(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.completions.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake model: waited for ${count} requests`)), timeoutMs);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** Resolves when the client has closed the given chat-completion request (0-based) before it finished. */
  waitForAbort(index: number, timeoutMs = 10_000): Promise<void> {
    const record = this.completions[index];
    if (!record) return Promise.reject(new Error(`fake model: no request #${index}`));
    if (record.aborted) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake model: request #${index} was not aborted`)), timeoutMs);
      const list = this.abortWaiters.get(record) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.abortWaiters.set(record, list);
    });
  }

  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
    this.handler = null;
    this.modelsStep = null;
  }

  async close(): Promise<void> {
    for (const res of this.openResponses) res.destroy();
    this.openResponses.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const body = await this.readBody(req);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      aborted: false,
      receivedAt: performance.now(),
    };
    this.requests.push(record);
    this.openResponses.add(res);
    res.on('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        for (const resolve of this.abortWaiters.get(record) ?? []) resolve();
        this.abortWaiters.delete(record);
      }
      this.openResponses.delete(res);
    });
    if (req.method === 'GET' && path.endsWith('/models')) {
      await this.answerModels(res);
      return;
    }
    if (req.method === 'POST' && path.endsWith('/chat/completions')) {
      for (const waiter of [...this.waiters]) {
        if (this.completions.length >= waiter.count) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const step = this.handler?.(record) ?? this.queue.shift() ?? { content: 'ok' };
      await this.answerCompletion(record, step, res);
      return;
    }
    this.sendJson(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
  }

  private sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  }

  private async sendError(res: ServerResponse, step: FakeStep): Promise<void> {
    const status = step.status ?? 500;
    const body = step.errorBody ?? {
      error: {
        message: `fake error ${status}`,
        type: status === 401 ? 'invalid_request_error' : status === 429 ? 'rate_limit_error' : 'server_error',
        code: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : null,
      },
    };
    this.sendJson(res, status, body, step.headers);
  }

  private async answerModels(res: ServerResponse): Promise<void> {
    const step = this.modelsStep;
    if (step?.delayMs) await sleep(step.delayMs);
    if (step?.hang) return;
    if (step?.status && step.status >= 400) {
      await this.sendError(res, step);
      return;
    }
    this.sendJson(res, 200, {
      object: 'list',
      data: this.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake', ...this.modelFields[id] })),
    });
  }

  private async answerCompletion(record: RecordedRequest, step: FakeStep, res: ServerResponse): Promise<void> {
    if (step.delayMs) await sleep(step.delayMs);
    if (step.hang || res.destroyed) return;
    if (step.status && step.status >= 400) {
      await this.sendError(res, step);
      return;
    }
    const request = (record.body ?? {}) as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
    const id = `chatcmpl-fake-${++this.completionCounter}`;
    const model = request.model ?? 'fake-model';
    const usage = step.usage ?? DEFAULT_USAGE;
    const toolCalls = (step.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_fake_${this.completionCounter}_${index}`,
      name: call.name,
      arguments: call.arguments,
    }));
    const answer = step.chunks ? step.chunks.join('') : (step.content ?? (toolCalls.length ? '' : 'ok'));
    const thinkBlock = step.reasoning !== undefined && step.reasoningAs === 'think';
    const content = thinkBlock ? `<think>${step.reasoning}</think>\n\n${answer}` : answer;
    const finishReason = step.finishReason !== undefined ? step.finishReason : toolCalls.length ? 'tool_calls' : 'stop';

    if (!request.stream) {
      this.sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: content || (toolCalls.length ? null : ''),
              ...(step.reasoning !== undefined && !thinkBlock ? { [step.reasoningAs ?? 'reasoning_content']: step.reasoning } : {}),
              ...(toolCalls.length
                ? {
                    tool_calls: toolCalls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
            finish_reason: finishReason,
          },
        ],
        usage,
      });
      return;
    }

    if (step.wholeBody !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(step.wholeBody));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (step.oneWrite && !step.chunkDelayMs) {
      // corked until the writes of this tick (the whole response: no delays) are done: one write of all the events
      const socket = res.socket;
      socket?.cork();
      setImmediate(() => socket?.uncork());
    }
    const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
    if (step.rawSse) {
      for (const piece of step.rawSse) {
        if (res.destroyed) return;
        res.write(piece);
        if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
      }
      res.end();
      return;
    }
    if (step.rawChunks) {
      for (const raw of step.rawChunks) {
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify(raw)}\n\n`);
        if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
      }
      res.end(step.omitDone ? undefined : 'data: [DONE]\n\n');
      return;
    }
    const write = async (delta: Record<string, unknown>, finish: string | null = null): Promise<boolean> => {
      if (res.destroyed) return false;
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
      return !res.destroyed;
    };
    if (!(await write({ role: 'assistant', content: '' }))) return;
    if (step.reasoning !== undefined && !thinkBlock) {
      for (const piece of splitText(step.reasoning, 8)) {
        if (!(await write({ content: null, [step.reasoningAs ?? 'reasoning_content']: piece }))) return;
      }
    }
    const chunks = thinkBlock ? splitText(content, 8) : (step.chunks ?? splitText(content, 8));
    for (const chunk of chunks) {
      record.firstContentChunkAt ??= performance.now();
      if (!(await write({ content: chunk }))) return;
    }
    if (step.hangAfterChunks) return;
    for (const [index, call] of toolCalls.entries()) {
      // first chunk: id + name + the first part of the arguments; then the rest in small pieces
      const pieces = splitText(call.arguments, step.argumentChunkChars ?? 5);
      if (
        !(await write({
          tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: pieces[0] ?? '' } }],
        }))
      )
        return;
      for (const piece of pieces.slice(1)) {
        if (!(await write({ tool_calls: [{ index, function: { arguments: piece } }] }))) return;
      }
    }
    if (!(await write({}, finishReason))) return;
    if (request.stream_options?.include_usage && !step.omitUsage) {
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    }
    res.end(step.omitDone ? undefined : 'data: [DONE]\n\n');
  }
}
