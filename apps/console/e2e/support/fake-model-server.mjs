// A small scriptable fake OpenAI-compatible model server for the browser e2e (plain JS, same behaviour as
// apps/api/test/support/fake-model-server.ts for what the console scenarios need):
//   GET  /v1/models            → { data: [{ id }] } from `models`
//   POST /v1/chat/completions  → the next queued step (default: "ok"), streamed as SSE when `stream: true`,
//                                 with chunk delays, tool calls split across chunks, a usage chunk, or a hang;
//                                 `reasoning` streams first as DeepSeek's `delta.reasoning_content` (or `reasoningAs:
//                                 'think'`: a leading `<think>…</think>` block in the content, as Qwen3 sends it).
import { createServer } from 'node:http';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function splitText(text, size) {
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export class FakeModelServer {
  models = ['fake-model'];
  requests = [];
  #queue = [];
  #server;
  #open = new Set();
  #counter = 0;

  static async start() {
    const instance = new FakeModelServer();
    instance.#server = createServer((req, res) => void instance.#handle(req, res));
    await new Promise((resolve) => instance.#server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.#server.address().port}/v1`;
  }

  get completions() {
    return this.requests.filter((request) => request.path.endsWith('/chat/completions'));
  }

  /** Steps: { content?, chunks?, reasoning?, reasoningAs?, toolCalls?: [{ id?, name, arguments }], chunkDelayMs?, delayMs?, status?, hangAfterChunks?, usage?, omitUsage? } */
  enqueue(...steps) {
    this.#queue.push(...steps);
    return this;
  }

  async close() {
    for (const res of this.#open) res.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req, res) {
    const path = (req.url ?? '/').split('?')[0];
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const record = { method: req.method, path, headers: req.headers, body, aborted: false };
    this.requests.push(record);
    this.#open.add(res);
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
      this.#open.delete(res);
    });
    if (req.method === 'GET' && path.endsWith('/models')) {
      this.#json(res, 200, { object: 'list', data: this.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })) });
      return;
    }
    if (req.method === 'POST' && path.endsWith('/chat/completions')) {
      await this.#completion(record, this.#queue.shift() ?? { content: 'ok' }, res);
      return;
    }
    this.#json(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
  }

  #json(res, status, payload) {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  async #completion(record, step, res) {
    if (step.delayMs) await sleep(step.delayMs);
    if (res.destroyed) return;
    if (step.status && step.status >= 400) {
      this.#json(res, step.status, { error: { message: `fake error ${step.status}`, type: 'server_error' } });
      return;
    }
    const request = record.body ?? {};
    const id = `chatcmpl-fake-${++this.#counter}`;
    const model = request.model ?? 'fake-model';
    const usage = step.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const toolCalls = (step.toolCalls ?? []).map((call, index) => ({ id: call.id ?? `call_fake_${this.#counter}_${index}`, ...call }));
    const answer = step.chunks ? step.chunks.join('') : (step.content ?? (toolCalls.length ? '' : 'ok'));
    const thinkBlock = step.reasoning !== undefined && step.reasoningAs === 'think';
    const content = thinkBlock ? `<think>${step.reasoning}</think>\n\n${answer}` : answer;
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    if (!request.stream) {
      const message = { role: 'assistant', content: content || (toolCalls.length ? null : '') };
      if (toolCalls.length) {
        message.tool_calls = toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
      }
      this.#json(res, 200, { id, object: 'chat.completion', created: 0, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const base = { id, object: 'chat.completion.chunk', created: 0, model };
    const write = async (delta, finishReason = null) => {
      if (res.destroyed) return false;
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
      if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
      return !res.destroyed;
    };
    if (!(await write({ role: 'assistant', content: '' }))) return;
    if (step.reasoning !== undefined && !thinkBlock) {
      for (const piece of splitText(step.reasoning, 8)) {
        if (!(await write({ content: null, reasoning_content: piece }))) return;
      }
    }
    for (const chunk of thinkBlock ? splitText(content, 8) : (step.chunks ?? splitText(content, 8))) {
      if (!(await write({ content: chunk }))) return;
    }
    if (step.hangAfterChunks) return;
    for (const [index, call] of toolCalls.entries()) {
      const pieces = splitText(call.arguments, 5);
      if (!(await write({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: pieces[0] ?? '' } }] }))) return;
      for (const piece of pieces.slice(1)) {
        if (!(await write({ tool_calls: [{ index, function: { arguments: piece } }] }))) return;
      }
    }
    if (!(await write({}, finish))) return;
    if (request.stream_options?.include_usage && !step.omitUsage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }
}
