/**
 * Warms the code a first turn runs, once the server listens (SERVER_LISTENING_EVENT), in the background: without it the
 * first turn after a start pays for lazily loaded and not yet optimised code (the `openai` SDK's request path and the
 * stream reader of completion-stream.ts, the web Response/stream classes behind the provider fetch,
 * AbortSignal/DOMException, the UUID source) and for reading SOUL.md and MEMORY.md into their cache. Nothing is sent anywhere: the SDK call is answered by an
 * in-process fetch with a canned two-chunk stream. Every step is best effort (a failure is logged at debug level).
 */
import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { formatEvent } from '../common/log-format';
import { SERVER_LISTENING_EVENT } from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { completionChunkBatches } from '../llm-settings/completion-stream';
import { createProviderClient } from '../llm-settings/provider-client';
import { MemoryDocuments } from '../memory/memory-documents';

const CANNED_STREAM = [
  { id: 'warmup', object: 'chat.completion.chunk', created: 0, model: 'warmup', choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] },
  { id: 'warmup', object: 'chat.completion.chunk', created: 0, model: 'warmup', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
]
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .concat('data: [DONE]\n\n')
  .join('');

/** A fetch that never leaves the process: every request gets the canned stream. */
const cannedFetch: typeof fetch = async () => {
  const bytes = new TextEncoder().encode(CANNED_STREAM);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
};

@Injectable()
export class FirstTurnWarmup {
  private readonly logger = new Logger(FirstTurnWarmup.name);
  private done: Promise<void> | null = null;

  constructor(private readonly memory: MemoryDocuments) {}

  @OnAppEvent(SERVER_LISTENING_EVENT)
  onServerListening(): void {
    // after the listen callbacks and the first health answers
    setImmediate(() => void this.warm());
  }

  /** Runs the warm-up once (later calls return the same promise). */
  warm(): Promise<void> {
    this.done ??= this.run();
    return this.done;
  }

  private async run(): Promise<void> {
    const started = performance.now();
    await this.step('memory_files', () => Promise.all([this.memory.readSoul(), this.memory.readLongTermMemory()]));
    await this.step('runtime', async () => {
      randomUUID();
      const controller = new AbortController();
      AbortSignal.any([controller.signal, AbortSignal.timeout(60_000)]);
      controller.abort();
      new Headers({ 'content-type': 'application/json' }).get('content-type');
    });
    await this.step('model_client', async () => {
      const client = createProviderClient({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'warmup', timeoutMs: 10_000 });
      const sdk = client.withOptions({ fetch: cannedFetch });
      const batches = completionChunkBatches(sdk, {
        model: 'warmup',
        messages: [{ role: 'user', content: 'warm up' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const batch of batches) void batch;
    });
    this.logger.debug(formatEvent('server.warmup.done', { duration_ms: Math.round(performance.now() - started) }));
  }

  private async step(name: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.debug(formatEvent('server.warmup.step_failed', { step: name, error_type: error instanceof Error ? error.name : 'unknown' }));
    }
    // one step per turn of the event loop: a request arriving meanwhile is served between steps
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
