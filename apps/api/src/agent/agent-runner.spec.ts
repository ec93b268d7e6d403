/**
 * AgentRunner against raw local HTTP servers, for the stream shapes the scriptable fake cannot produce: a stream that
 * breaks after text was sent, and providers that split tool names or omit tool-call ids.
 */
import { Logger } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { createProviderClient } from '../llm-settings/provider-client';
import { AgentCancelledError, AgentRunner, ModelCallError, type RunRequest } from './agent-runner';
import type { ChatMessage, ToolCallRecord } from '../memory/memory.types';
import { OpenAiModelGateway } from '../llm-settings/openai-model-gateway';
import type { UsageService } from '../usage/usage.service';
import type { ElicitationsService } from './elicitations';
import type { ToolGate } from './tool-gate';
import type { ArtifactSink } from './tool-output-budget';
import { ToolExecutor } from './tool-executor';
import { ToolRegistry } from './tool-registry';

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

async function serve(handler: Handler): Promise<{ url: string; requests: number; close: () => Promise<void> }> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res, state.requests++));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get requests() {
      return state.requests;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sse(res: ServerResponse, chunks: unknown[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  if (end) res.end('data: [DONE]\n\n');
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'x',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const config = { maxIterations: 3, llmMaxRetries: 2, toolOutputBudgetChars: 0 } as AppConfig;

/** The runner with its real executor and gateway; every call runs, nothing is limited or recorded, results go whole. */
function runnerWith(registry: ToolRegistry): AgentRunner {
  const gate: ToolGate = { gate: () => ({ plainAllow: true, open: () => Promise.resolve({ run: true }) }) };
  const artifacts: ArtifactSink = { saveArtifact: () => Promise.resolve(false) };
  const executor = new ToolExecutor(config, registry, gate, {} as ElicitationsService, artifacts);
  const usage = { reserve: () => ({}), settle: () => null } as unknown as UsageService;
  return new AgentRunner(config, registry, executor, new OpenAiModelGateway(config, usage));
}

function runRequest(url: string, overrides: Partial<RunRequest> = {}): RunRequest & { deltas: string[] } {
  const deltas: string[] = [];
  return {
    client: createProviderClient({ baseURL: url, apiKey: 'k', timeoutMs: 5000 }),
    provider: 'openai_compatible',
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    chatId: 'c1',
    turnId: 'a'.repeat(32),
    signal: new AbortController().signal,
    listener: { delta: (text) => deltas.push(text), toolCall: () => undefined, toolResult: () => undefined },
    deltas,
    ...overrides,
  };
}

describe(AgentRunner.name, () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('Scenario: a stream that breaks after text was sent is not retried and ends in a clear error', async () => {
    const server = await serve((_req, res) => {
      sse(res, [chunk({ content: 'Half an ans' })], false);
      setImmediate(() => res.socket?.destroy());
    });
    try {
      const runner = runnerWith(new ToolRegistry());
      const request = runRequest(server.url);
      const failure = await runner.run(request).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ModelCallError);
      expect((failure as ModelCallError).message).toMatch(/^The model stream was interrupted/);
      expect(request.deltas).toEqual(['Half an ans']);
      expect(server.requests).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('Scenario: a connection dropped before any text is retried', async () => {
    const server = await serve((_req, res, index) => {
      if (index === 0) {
        res.socket?.destroy();
        return;
      }
      sse(res, [chunk({ content: 'fine' }), chunk({}, 'stop')]);
    });
    try {
      const runner = runnerWith(new ToolRegistry());
      const outcome = await runner.run(runRequest(server.url));
      expect(outcome.content).toBe('fine');
      expect(server.requests).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('Scenario: tool names split across chunks and missing call ids are handled', async () => {
    const registry = new ToolRegistry();
    const calls: Array<Record<string, unknown>> = [];
    registry.register({
      name: 'lookup_word',
      description: 'd',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: async (args) => {
        calls.push(args);
        return 'found';
      },
    });
    const server = await serve((_req, res, index) => {
      if (index === 0) {
        sse(res, [
          chunk({ tool_calls: [{ index: 0, type: 'function', function: { name: 'lookup_', arguments: '{"w":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { name: 'word', arguments: '"cat"}' } }] }),
          chunk({}, 'tool_calls'),
        ]);
      } else {
        sse(res, [chunk({ content: 'a cat' }), chunk({}, 'stop')]);
      }
    });
    try {
      const ids: string[] = [];
      const runner = runnerWith(registry);
      const request = runRequest(server.url, {
        listener: { delta: () => undefined, toolCall: (n) => ids.push(n.callId), toolResult: () => undefined },
      });
      const outcome = await runner.run(request);
      expect(calls).toEqual([{ w: 'cat' }]);
      expect(ids[0]).toMatch(/^call_[0-9a-f]{24}$/);
      expect(outcome.durable[0]).toMatchObject({ role: 'assistant', tool_calls: [{ id: ids[0], function: { name: 'lookup_word' } }] });
      expect(outcome.durable[1]).toMatchObject({ role: 'tool', tool_call_id: ids[0], name: 'lookup_word', content: 'found' });
      expect(outcome.content).toBe('a cat');
    } finally {
      await server.close();
    }
  });

  it("Scenario: the request body is the SDK's JSON of the conversation (history, then the turn's tool rounds)", async () => {
    const registry = new ToolRegistry();
    registry.register({
      name: 'echo_word',
      description: 'Echo a word',
      parameters: { type: 'object', properties: { w: { type: 'string' } } },
      readOnly: true,
      execute: async () => 'écho « ok » 🙂',
    });
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (data: Buffer) => chunks.push(data));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        if (bodies.length % 2 === 1) {
          sse(res, [
            chunk({ tool_calls: [{ index: 0, id: `call_${bodies.length}`, type: 'function', function: { name: 'echo_word', arguments: '{"w":"x"}' } }] }),
            chunk({}, 'tool_calls'),
          ]);
        } else sse(res, [chunk({ content: 'done' }), chunk({}, 'stop')]);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const oldCalls: ToolCallRecord[] = [{ id: 'call_old', type: 'function', function: { name: 'echo_word', arguments: '{}' } }];
    const history: ChatMessage[] = [
      { role: 'system', content: 'You are helpful. Ünïcödé "quotes" \\ and \n newlines' },
      { role: 'user', content: 'earlier question 天气' },
      { role: 'assistant', content: '[TOOL_CALLS: echo_word]', tool_calls: oldCalls },
      { role: 'tool', content: 'old result', tool_call_id: 'call_old', name: 'echo_word' },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: 'now' },
    ];
    const wireHistory = [
      { role: 'system', content: history[0]!.content },
      { role: 'user', content: 'earlier question 天气' },
      // the history's placeholder is not sent: the calls are
      { role: 'assistant', content: '', tool_calls: oldCalls },
      { role: 'tool', content: 'old result', tool_call_id: 'call_old' },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: 'now' },
    ];
    const tools = [{ type: 'function', function: { name: 'echo_word', description: 'Echo a word', parameters: { type: 'object', properties: { w: { type: 'string' } } } } }];
    const sdkBody = (messages: unknown[]) =>
      JSON.stringify({ model: 'm', messages, stream: true, stream_options: { include_usage: true }, tools, tool_choice: 'auto' });
    try {
      const runner = runnerWith(registry);
      await runner.run(runRequest(url, { messages: history }));
      await runner.run(runRequest(url, { messages: history }));
      expect(bodies).toHaveLength(4);
      expect(bodies[0]).toBe(sdkBody(wireHistory));
      const round = [
        // the tool-call message as the next turn's history gives it back (empty content): a cacheable prefix
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo_word', arguments: '{"w":"x"}' } }] },
        { role: 'tool', content: 'écho « ok » 🙂', tool_call_id: 'call_1' },
      ];
      expect(bodies[1]).toBe(sdkBody([...wireHistory, ...round]));
      expect(bodies[2]).toBe(bodies[0]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('Scenario: aborting while waiting for a retry ends the turn as cancelled at once', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '20' });
      res.end('{"error":{"message":"slow down"}}');
    });
    try {
      const controller = new AbortController();
      const runner = runnerWith(new ToolRegistry());
      const running = runner.run(runRequest(server.url, { signal: controller.signal }));
      while (server.requests === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      const failure = await running.catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(AgentCancelledError);
      expect((failure as AgentCancelledError).partial).toMatchObject({ content: '', streamed: false, durable: [] });
    } finally {
      await server.close();
    }
  });
});
