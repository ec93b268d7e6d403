/**
 * The loop's sub-agent hooks (agent-runner.ts `child`, `activeRun`; tool-registry.ts `ToolScope.only`) against a raw
 * local model server: what a child is offered and may run, its iteration limit, its call ids, and how a tool call finds
 * the run it belongs to.
 */
import { Logger } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../../config/app-config';
import { createProviderClient } from '../../llm-settings/provider-client';
import { OpenAiModelGateway } from '../../llm-settings/openai-model-gateway';
import type { UsageService } from '../../usage/usage.service';
import { AgentRunner, type ActiveRun } from '../agent-runner';
import type { ElicitationsService } from '../elicitations';
import { ToolExecutor } from '../tool-executor';
import type { ToolGate } from '../tool-gate';
import { ToolRegistry } from '../tool-registry';

const config = { maxIterations: 5, llmMaxRetries: 0, toolOutputBudgetChars: 0 } as AppConfig;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('sub-agent runs of the loop', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('a child is offered and runs only its tools, ends at its limit without a final call, and gets fresh call ids', async () => {
    const bodies: Array<{ tools?: Array<{ function: { name: string } }> }> = [];
    const server: Server = createServer((req, res) => {
      let text = '';
      req.on('data', (part: Buffer) => (text += part.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(text) as (typeof bodies)[number]);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const call = (index: number, name: string) => ({ index, id: 'same', type: 'function', function: { name, arguments: '{}' } });
        res.write(chunk({ tool_calls: [call(0, 'secret'), call(1, 'lookup')] }));
        res.end(chunk({}, 'tool_calls') + 'data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const registry = new ToolRegistry();
      let seen: ActiveRun | undefined;
      let runner: AgentRunner | null = null;
      registry.register({ name: 'secret', description: 'd', parameters: { type: 'object', properties: {} }, readOnly: true, execute: () => Promise.resolve('leaked') });
      registry.register({
        name: 'lookup',
        description: 'd',
        parameters: { type: 'object', properties: {} },
        readOnly: true,
        execute: (_args, ctx) => {
          seen = runner?.activeRun(ctx.signal);
          return Promise.resolve('found');
        },
      });
      const gate: ToolGate = { gate: () => ({ plainAllow: true, open: () => Promise.resolve({ run: true }) }) };
      const executor = new ToolExecutor(config, registry, gate, {} as ElicitationsService, { saveArtifact: () => Promise.resolve(false) });
      const usage = { reserve: () => ({}), settle: () => null } as unknown as UsageService;
      runner = new AgentRunner(config, registry, executor, new OpenAiModelGateway(config, usage));
      const signal = new AbortController().signal;
      const results: Array<[string, string, boolean]> = [];
      const outcome = await runner.run({
        client: createProviderClient({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'k', timeoutMs: 5000 }),
        provider: 'openai_compatible',
        model: 'm',
        messages: [{ role: 'user', content: 'task' }],
        chatId: 'c1',
        turnId: 'a'.repeat(32),
        signal,
        purpose: 'subagent',
        child: { depth: 1, tools: new Set(['lookup']), maxIterations: 1, maxTokens: 100_000, ref: { call_id: 'd1', task: 'task' } },
        listener: {
          delta: () => undefined,
          toolCall: () => undefined,
          toolResult: (notice) => results.push([notice.name, notice.result, notice.ok]),
        },
      });
      expect(bodies.map((body) => (body.tools ?? []).map((tool) => tool.function.name))).toEqual([['lookup']]);
      expect(results).toEqual([
        ['secret', "Error: Tool 'secret' is not available to this sub-agent. Available: lookup", false],
        ['lookup', 'found', true],
      ]);
      expect(outcome).toMatchObject({ content: '', iterationLimitReached: true, modelCalls: 1 });
      const ids = outcome.durable.flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : []));
      expect(ids).toHaveLength(2);
      expect(ids.every((id) => /^call_[0-9a-f]{24}$/.test(id))).toBe(true);
      expect(new Set(ids).size).toBe(2);
      expect(seen).toMatchObject({ depth: 1, tools: ['lookup'] });
      expect(runner.activeRun(signal)).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
