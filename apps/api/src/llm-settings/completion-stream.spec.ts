import { APIError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { completionChunkBatches } from './completion-stream';
import { createProviderClient } from './provider-client';

const PARAMS: ChatCompletionCreateParamsStreaming = {
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
};

function chunk(content: string): string {
  const body = { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/**
 * A body whose reads are exactly `reads` (each string one network read), handed out one per `pull`; `hold` keeps it
 * open after them (an endless stream), and `cancelled` reports whether the reader gave it up.
 */
function scriptedBody(reads: string[], hold = false): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  let next = 0;
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next < reads.length) controller.enqueue(encoder.encode(reads[next++]));
        else if (!hold) controller.close();
        else return new Promise<void>(() => undefined);
        return undefined;
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, cancelled: () => cancelled };
}

/** The real SDK client with a fetch that answers every request with `body` (status 200 unless given). */
function clientAnswering(body: ReadableStream<Uint8Array> | string, status = 200) {
  const client = createProviderClient({ baseURL: 'http://model.test/v1', apiKey: 'sk-test', timeoutMs: 5_000 });
  return client.withOptions({
    fetch: async () =>
      new Response(body, {
        status,
        headers: { 'content-type': status === 200 ? 'text/event-stream' : 'application/json' },
      }),
  });
}

async function collect(batches: AsyncIterable<ChatCompletionChunk[]>): Promise<string[][]> {
  const seen: string[][] = [];
  for await (const batch of batches) seen.push(batch.map((c) => c.choices[0]?.delta.content ?? ''));
  return seen;
}

describe('completionChunkBatches', () => {
  it('Scenario: the chunks of one network read come as one batch, the next read as its own', async () => {
    const { stream } = scriptedBody([chunk('a') + chunk('b') + chunk('c'), chunk('d'), 'data: [DONE]\n\n']);
    expect(await collect(completionChunkBatches(clientAnswering(stream), PARAMS))).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('Scenario: an event split across reads is parsed once it is complete', async () => {
    const bytes = new TextEncoder().encode(chunk('héllo') + chunk('wörld'));
    // the first read ends inside the first event, between the two bytes of "é"
    const cut = bytes.indexOf(0xc3) + 1;
    const parts = [bytes.slice(0, cut), bytes.slice(cut)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const part = parts.shift();
        if (part) controller.enqueue(part);
        else controller.close();
      },
    });
    expect(await collect(completionChunkBatches(clientAnswering(body), PARAMS))).toEqual([['héllo', 'wörld']]);
  });

  it('Scenario: the stream ends at [DONE], and a last event without a blank line still counts', async () => {
    const done = scriptedBody([chunk('a') + 'data: [DONE]\n\n' + chunk('after')], true);
    expect(await collect(completionChunkBatches(clientAnswering(done.stream), PARAMS))).toEqual([['a']]);
    // the body was still open after [DONE]: it is given up, not read to its end
    expect(done.cancelled()).toBe(true);
    const unterminated = scriptedBody([chunk('a') + chunk('b').trimEnd()]);
    expect(await collect(completionChunkBatches(clientAnswering(unterminated.stream), PARAMS))).toEqual([['a'], ['b']]);
  });

  it('Scenario: usage and tool-call chunks come through as the provider sent them', async () => {
    const usage = { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
    const call = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null }],
    };
    const { stream } = scriptedBody([`: keep-alive comment\n\ndata: ${JSON.stringify(call)}\n\ndata: ${JSON.stringify(usage)}\n\ndata: [DONE]\n\n`]);
    const batches: ChatCompletionChunk[][] = [];
    for await (const batch of completionChunkBatches(clientAnswering(stream), PARAMS)) batches.push(batch);
    expect(batches).toEqual([[call, usage]]);
  });

  it('Scenario: an error event or an error member in the stream fails the call with the provider error', async () => {
    const member = scriptedBody([chunk('a') + `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`]);
    const seen: string[][] = [];
    const failure = await collect(
      (async function* () {
        for await (const batch of completionChunkBatches(clientAnswering(member.stream), PARAMS)) {
          seen.push(batch.map((c) => c.choices[0]?.delta.content ?? ''));
          yield batch;
        }
      })(),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).message).toContain('overloaded');
    expect((failure as APIError).status).toBeUndefined();
    // nothing of the read that failed is handed out
    expect(seen).toEqual([]);

    const named = scriptedBody([`event: error\ndata: ${JSON.stringify({ message: 'bad things' })}\n\n`]);
    const namedFailure = await collect(completionChunkBatches(clientAnswering(named.stream), PARAMS)).catch((error: unknown) => error);
    expect(namedFailure).toBeInstanceOf(APIError);
    expect((namedFailure as APIError).message).toContain('bad things');
  });

  it('Scenario: data that is not JSON fails the call as a malformed stream and gives up the body', async () => {
    const { stream, cancelled } = scriptedBody(['data: {not json\n\n'], true);
    const failure = await collect(completionChunkBatches(clientAnswering(stream), PARAMS)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SyntaxError);
    expect((failure as Error).message).toBe('Error reading response: malformed server-sent event JSON.');
    expect(cancelled()).toBe(true);
  });

  it('Scenario: an HTTP error answer is the SDK error, before any batch', async () => {
    const body = JSON.stringify({ error: { message: 'no such model', type: 'invalid_request_error', code: 'model_not_found' } });
    const failure = await collect(completionChunkBatches(clientAnswering(body, 404), PARAMS)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).status).toBe(404);
  });

  it('Scenario: an aborted stream ends quietly, and stopping early gives up the body', async () => {
    const controller = new AbortController();
    const open = scriptedBody([chunk('a')], true);
    const client = createProviderClient({ baseURL: 'http://model.test/v1', apiKey: 'sk-test', timeoutMs: 5_000 }).withOptions({
      // like the provider fetch: the abort errors the body with the signal's reason
      fetch: async (_url, init) => {
        const reader = open.stream.getReader();
        const body = new ReadableStream<Uint8Array>({
          async pull(out) {
            const aborted = new Promise<never>((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
            const read = await Promise.race([reader.read(), aborted]);
            if (read.done) out.close();
            else out.enqueue(read.value);
          },
        });
        return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      },
    });
    const seen: string[][] = [];
    for await (const batch of completionChunkBatches(client, PARAMS, { signal: controller.signal })) {
      seen.push(batch.map((c) => c.choices[0]?.delta.content ?? ''));
      controller.abort();
    }
    expect(seen).toEqual([['a']]);

    const early = scriptedBody([chunk('a'), chunk('b')], true);
    for await (const batch of completionChunkBatches(clientAnswering(early.stream), PARAMS)) {
      expect(batch).toHaveLength(1);
      break;
    }
    expect(early.cancelled()).toBe(true);
  });
});
