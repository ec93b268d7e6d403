/**
 * A streamed chat completion, read as batches: the chunks parsed from one read of the response body come in one
 * array, so a caller handles them at once. The provider fetch (http-fetch.ts) hands over the body chunk by chunk of the
 * chunked transfer encoding, usually one SSE event each; all the chunks of one network read are queued in the same
 * tick and read without a pause, so their deltas leave as one `delta` event (chat/delta-coalescer.ts).
 *
 * Why not the SDK's `Stream`: it passes every server-sent event through four nested async generators (byte chunks,
 * lines, SSE messages, JSON values), each `yield` a promise and a microtask, and copies each event's bytes on the way.
 * One network read of a busy provider's stream holds hundreds of events. Here the `openai` SDK still builds, sends,
 * retries and classifies the request (`asResponse()` resolves only for a 2xx answer); only the body is read
 * differently: one `read()` per body chunk, decoded once, parsed synchronously by `eventsource-parser` (the SSE parser
 * of the MCP SDK and the Vercel AI SDK). Kept because it pays: about a third less server CPU per turn under load
 * (figures in bench/README.md).
 *
 * What the SDK's stream does, this does too (openai 7.x `Stream.fromSSEResponse`, legacy mode):
 * - `data: [DONE]` ends the stream; a body that ends without it ends the stream quietly;
 * - data that is not JSON throws `SyntaxError('Error reading response: malformed server-sent event JSON.')`;
 * - an `event: error` message, or data with an `error` member, throws the SDK's `APIError` (no status) with it;
 * and what real servers send besides (each a test in `test/provider-streams.e2e-spec.ts`):
 * - comments (`: OPENROUTER PROCESSING`, `: ping`) and empty `data:` keep-alive events are skipped;
 * - vLLM's error object in the stream (`{"object":"error","message":…,"code":400}`) throws like an `error` member;
 * - llama.cpp builds of 2025 send a mid-stream error as a field of its own (`error: {"code":400,…}`), which SSE
 *   parsers ignore as unknown: it throws like an `error` member, and so does an unframed `{"error":…}` line (a proxy
 *   that forwards a backend's error body into the open stream);
 * - a server that ignores `stream: true` and answers one `chat.completion` JSON body: its message is one chunk;
 * - an aborted request ends the stream quietly (the caller checks its signal), and leaving the loop early cancels the
 *   body, which closes the connection.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { APIError, type OpenAI } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';

/** the SDK's per-request options (signal, retries, timeout, headers) */
type RequestOptions = NonNullable<Parameters<OpenAI['chat']['completions']['create']>[1]>;

const DONE = '[DONE]';

/** The error a stream's JSON value carries: an `error` member (OpenAI, OpenRouter, llama.cpp), or vLLM's error object. */
function streamError(data: unknown): object | null {
  if (typeof data !== 'object' || data === null) return null;
  const record = data as { error?: unknown; object?: unknown };
  if (record.error) return typeof record.error === 'object' ? record.error : { message: String(record.error) };
  return record.object === 'error' ? record : null;
}

/** A `chat.completion` body (a server that ignored `stream: true`) as the one chunk that streams the same answer. */
async function wholeCompletionChunk(response: Response): Promise<ChatCompletionChunk> {
  let data: unknown;
  try {
    data = JSON.parse(await response.text());
  } catch {
    throw new SyntaxError('Error reading response: malformed JSON body.');
  }
  const error = streamError(data);
  if (error) throw new APIError(undefined, error, undefined, response.headers);
  const completion = (data ?? {}) as { choices?: unknown; usage?: unknown };
  const choices = Array.isArray(completion.choices) ? (completion.choices as Array<Record<string, unknown>>) : [];
  return {
    ...(completion as object),
    object: 'chat.completion.chunk',
    choices: choices.map((choice, index) => {
      const message = (choice['message'] ?? {}) as Record<string, unknown>;
      const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Array<Record<string, unknown>>) : [];
      return {
        index,
        delta: { ...message, ...(calls.length > 0 ? { tool_calls: calls.map((call, at) => ({ index: at, ...call })) } : {}) },
        finish_reason: choice['finish_reason'] ?? null,
      };
    }),
  } as ChatCompletionChunk;
}

function isAbort(error: unknown, signal: AbortSignal | null | undefined): boolean {
  if (signal?.aborted) return true;
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'APIUserAbortError');
}

/** Streams `params` (a streaming chat completion) as batches of chunks, one batch per body read that held any. */
export async function* completionChunkBatches(
  client: OpenAI,
  params: ChatCompletionCreateParamsStreaming,
  options: RequestOptions = {},
): AsyncGenerator<ChatCompletionChunk[], void, undefined> {
  const response = await client.chat.completions.create(params, options).asResponse();
  const body = response.body;
  if (!body) throw new APIError(undefined, undefined, 'Attempted to iterate over a response with no body', response.headers);
  if (/^application\/json/i.test(response.headers.get('content-type') ?? '')) {
    yield [await wholeCompletionChunk(response)];
    return;
  }

  let batch: ChatCompletionChunk[] = [];
  let done = false;
  const onEvent = (message: EventSourceMessage): void => {
    if (done) return;
    if (message.data === DONE) {
      done = true;
      return;
    }
    // a keep-alive event without data
    if (message.data.trim() === '') return;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
    }
    if (message.event === 'error') {
      const record = data as { error?: unknown } | null;
      throw new APIError(undefined, (record?.error ?? record) as object | undefined, undefined, response.headers);
    }
    const error = streamError(data);
    if (error) throw new APIError(undefined, error, undefined, response.headers);
    batch.push(data as ChatCompletionChunk);
  };
  // a line that is not SSE: llama.cpp's `error: {…}` field, or an error body forwarded without `data:` framing
  const onError = (problem: ParseError): void => {
    if (done || problem.type !== 'unknown-field') return;
    const text = problem.field === 'error' ? (problem.value ?? '') : (problem.line ?? '');
    if (!text.trimStart().startsWith('{')) return;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return;
    }
    const error = problem.field === 'error' ? (streamError(data) ?? (data as object)) : streamError(data);
    if (error) throw new APIError(undefined, error, undefined, response.headers);
  };
  const parser = createParser({ onEvent, onError });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  /** the body has ended or failed: nothing is left to cancel */
  let closed = false;
  try {
    while (!done) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        closed = true;
        if (isAbort(error, options.signal)) return;
        throw error;
      }
      if (read.done) {
        closed = true;
        // the last event of a body that ends without a blank line still counts, as in the SDK
        parser.feed(`${decoder.decode()}\n\n`);
        if (batch.length > 0) yield batch;
        return;
      }
      parser.feed(decoder.decode(read.value, { stream: true }));
      if (batch.length > 0) {
        const full = batch;
        batch = [];
        yield full;
      }
    }
  } finally {
    // after `[DONE]` (usually the body has ended by then: a no-op), on an error or when the caller stops early
    if (!closed) void reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
