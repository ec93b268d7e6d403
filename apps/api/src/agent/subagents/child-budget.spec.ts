/**
 * The token budget of a sub-agent (child-budget.ts): the guard on its own, and through the loop and the OpenAI
 * gateway against a raw local model server that reports usage — the call that would cross the budget is never sent.
 */
import { Logger } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../../config/app-config';
import { createProviderClient } from '../../llm-settings/provider-client';
import { OpenAiModelGateway } from '../../llm-settings/openai-model-gateway';
import type { ModelCallRequest, UsageService } from '../../usage/usage.service';
import { AgentRunner, ChildRunFailedError } from '../agent-runner';
import type { ElicitationsService } from '../elicitations';
import { ToolExecutor } from '../tool-executor';
import type { ToolGate } from '../tool-gate';
import { ToolRegistry } from '../tool-registry';
import { childBudget, SubagentBudgetError } from './child-budget';

const config = { maxIterations: 5, llmMaxRetries: 0, toolOutputBudgetChars: 0 } as AppConfig;
const request: ModelCallRequest = { provider: 'openai_compatible', model: 'm', purpose: 'subagent', chatId: 'c', promptChars: 0 };
const chunk = (body: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', ...body })}\n\n`;

describe('childBudget', () => {
  it('lets a call through while the used tokens plus its estimated input stay within the budget', () => {
    const used = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 700 };
    const guard = childBudget(1000, used);
    expect(guard.check(request, { promptTokens: 300, promptCost: undefined })).toBeNull();
    const refusal = guard.check(request, { promptTokens: 301, promptCost: undefined });
    expect(refusal).toBeInstanceOf(SubagentBudgetError);
    expect(refusal).toMatchObject({ code: 'budget_exceeded' });
    expect(refusal?.message).toBe("The sub-agent's budget of 1,000 tokens would be crossed by its next model call: 700 used, about 301 more to send.");
    // the usage is read at each check: the run's running total grows in place
    used.total_tokens = 1000;
    expect(guard.check(request, { promptTokens: 1, promptCost: undefined })).toBeInstanceOf(SubagentBudgetError);
  });
});

describe('a child run at its token budget', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('is refused before the call that would cross it, and only a child run is held to a budget', async () => {
    let requests = 0;
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'lookup', arguments: '{}' } }] }, finish_reason: null }] }));
        res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }));
        res.end(chunk({ choices: [], usage: { prompt_tokens: 960, completion_tokens: 30, total_tokens: 990 } }) + 'data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const registry = new ToolRegistry();
      registry.register({ name: 'lookup', description: 'd', parameters: { type: 'object', properties: {} }, readOnly: true, execute: () => Promise.resolve('found') });
      const gate: ToolGate = { gate: () => ({ plainAllow: true, open: () => Promise.resolve({ run: true }) }) };
      const executor = new ToolExecutor(config, registry, gate, {} as ElicitationsService, { saveArtifact: () => Promise.resolve(false) });
      const budgets: Array<number | null> = [];
      // the usage service's part: a call's own budget is asked before the call (usage.service.ts `reserve`)
      const usage = {
        reserve: (call: ModelCallRequest) => {
          const refusal = call.budget?.check(call, { promptTokens: Math.ceil(call.promptChars / 4), promptCost: undefined }) ?? null;
          budgets.push(call.budget ? 1 : null);
          if (refusal) throw refusal;
          return {};
        },
        settle: () => null,
      } as unknown as UsageService;
      const runner = new AgentRunner(config, registry, executor, new OpenAiModelGateway(config, usage));
      const base = {
        client: createProviderClient({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'k', timeoutMs: 5000 }),
        provider: 'openai_compatible' as const,
        model: 'm',
        messages: [{ role: 'user' as const, content: 'task' }],
        chatId: 'c1',
        turnId: 'a'.repeat(32),
        signal: new AbortController().signal,
        listener: { delta: () => undefined, toolCall: () => undefined, toolResult: () => undefined },
      };
      const child = { depth: 1, tools: new Set(['lookup']), maxIterations: 5, maxTokens: 1000, ref: { call_id: 'd1', task: 'task' } };
      const failed = await runner.run({ ...base, purpose: 'subagent', child }).then(
        () => null,
        (err: unknown) => err,
      );
      // the refusal, with what the child did before it: one round of tool calls and the usage of its one call
      expect(failed).toBeInstanceOf(ChildRunFailedError);
      expect((failed as ChildRunFailedError).reason).toBeInstanceOf(SubagentBudgetError);
      expect((failed as ChildRunFailedError).partial.durable.map((message) => message.role)).toEqual(['assistant', 'tool']);
      expect((failed as ChildRunFailedError).partial.usage.total_tokens).toBe(990);
      expect(requests).toBe(1);
      expect(budgets).toEqual([1, 1]);

      // a turn (no child) has no budget of its own: its calls go on past the child's budget (until the loop's own
      // limits end it, which is not what this checks)
      requests = 0;
      budgets.length = 0;
      await runner.run({ ...base, signal: new AbortController().signal }).catch(() => undefined);
      expect(budgets.every((entry) => entry === null)).toBe(true);
      expect(requests).toBeGreaterThan(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
