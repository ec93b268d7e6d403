/**
 * The runaway guard through the real gateway against a looping fake model (openspec agent-runner "Requirement: Runaway
 * guard"): identical calls, identical failures and the tool-call ceiling stop the loop with one instruction and a call
 * without tools; a model that keeps calling ends the turn with `runaway_stopped`, kept in the history and the metrics,
 * and an automation run that loops is recorded as `runaway_stopped` in its run history.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { AutomationRun, ServerEvent } from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { notRunResult, runawayNudge } from '../src/agent/runaway-guard';
import { ToolRegistry } from '../src/agent/tool-registry';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null }>;
}
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;

function testTool(name: string, execute: AgentTool['execute']): AgentTool {
  return {
    name,
    description: `test tool ${name}`,
    parameters: { type: 'object', properties: { n: { type: 'number' } } },
    readOnly: true,
    execute,
  };
}

async function historyRoles(t: TestApp, chatId: string): Promise<string[]> {
  const text = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { role: string }).role);
}

describe('runaway guard', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  const executed: string[] = [];

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MAX_ITERATIONS: '20', CASHCODE_MAX_TOOL_CALLS: '5' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const registry = t.app.get(ToolRegistry);
    registry.register(testTool('same', async () => 'the same answer'));
    registry.register(
      testTool('broken', async () => {
        throw new Error('disk on fire');
      }),
    );
    registry.register(
      testTool('count', async (args) => {
        executed.push(String((args as { n?: number }).n));
        return `counted ${String((args as { n?: number }).n)}`;
      }),
    );
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    fake.reset();
    executed.length = 0;
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  async function turn(chatId: string, content: string): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    client.sendMessage(chatId, content);
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  async function metric(line: string): Promise<number> {
    const text = (await request(t.httpUrl).get('/metrics')).text;
    const found = text.split('\n').find((l) => l.startsWith(`${line} `));
    return found ? Number(found.slice(line.length + 1)) : 0;
  }

  it('Scenario: a model repeating the same call is told to answer and answers without tools', async () => {
    const before = await metric('cashcode_runaway_guard_total{reason="repeated_call",outcome="answered"}');
    fake.setHandler((req) =>
      bodyOf(req).tools ? { toolCalls: [{ name: 'same', arguments: '{"n":1}' }] } : { content: 'what I have so far' },
    );
    const events = await turn('runaway-same', 'loop');
    expect(events.at(-1)?.event).toBe('done');
    // three identical rounds, then one call without tools that ends with the instruction
    expect(fake.completions).toHaveLength(4);
    const last = bodyOf(fake.completions[3]);
    expect(last.tools).toBeUndefined();
    expect(last.messages.at(-1)).toEqual({
      role: 'user',
      content: runawayNudge({ reason: 'repeated_call', tool: 'same', count: 3 }),
    });
    expect(events.filter((e) => e.event === 'tool_call')).toHaveLength(3);
    expect(await historyRoles(t, 'runaway-same')).toEqual(['user', 'tool_calls', 'tool', 'tool_calls', 'tool', 'tool_calls', 'tool', 'assistant']);
    const history = await fs.readFile(join(t.config.memoryDir, 'runaway-same', 'history.jsonl'), 'utf8');
    expect(history).not.toContain('Tools are no longer available');
    expect(await metric('cashcode_runaway_guard_total{reason="repeated_call",outcome="answered"}')).toBe(before + 1);
  });

  it('Scenario: a model that keeps calling after the instruction ends the turn with runaway_stopped', async () => {
    const errorsBefore = await metric('cashcode_turns_total{outcome="error",code="runaway_stopped"}');
    // the failing call repeats, and the model asks for it even when no tools are offered
    fake.setHandler(() => ({ toolCalls: [{ name: 'broken', arguments: '{}' }] }));
    const events = await turn('runaway-broken', 'loop on errors');
    const error = events.at(-1);
    expect(error).toMatchObject({ event: 'error', chat_id: 'runaway-broken', code: 'runaway_stopped' });
    expect((error as { detail: string }).detail).toContain('repeated the same broken call 3 times');
    expect(fake.completions).toHaveLength(4);
    expect(bodyOf(fake.completions[3]).tools).toBeUndefined();
    const toolResults = events.filter((e): e is Extract<ServerEvent, { event: 'tool_result' }> => e.event === 'tool_result');
    expect(toolResults.map((e) => e.ok)).toEqual([false, false, false]);

    // kept like other turn errors: the user message with its error marker
    const messages = await request(t.httpUrl).get('/api/sessions/runaway-broken/messages').expect(200);
    expect(messages.body.messages).toEqual([
      {
        role: 'user',
        content: 'loop on errors',
        error: { kind: 'runaway_stopped', message: (error as { detail: string }).detail },
        cursor: 1,
      },
    ]);
    expect(await metric('cashcode_turns_total{outcome="error",code="runaway_stopped"}')).toBe(errorsBefore + 1);
    expect(await metric('cashcode_runaway_guard_total{reason="repeated_call",outcome="stopped"}')).toBeGreaterThanOrEqual(1);
  });

  it('Scenario: the tool-call ceiling stops the loop and calls past it do not run', async () => {
    let n = 0;
    // three different calls per message: 3 run, then 2 run and 1 is refused (ceiling 5)
    fake.setHandler((req) =>
      bodyOf(req).tools
        ? { toolCalls: [0, 1, 2].map(() => ({ name: 'count', arguments: JSON.stringify({ n: ++n }) })) }
        : { content: 'stopped at the ceiling' },
    );
    const events = await turn('runaway-ceiling', 'count forever');
    expect(events.at(-1)?.event).toBe('done');
    expect(executed).toEqual(['1', '2', '3', '4', '5']);
    expect(fake.completions).toHaveLength(3);
    const last = bodyOf(fake.completions[2]);
    expect(last.tools).toBeUndefined();
    expect(last.messages.at(-1)?.content).toBe(runawayNudge({ reason: 'tool_call_ceiling', count: 5 }));
    const refused = events.filter((e): e is Extract<ServerEvent, { event: 'tool_result' }> => e.event === 'tool_result' && e.ok === false);
    expect(refused.map((e) => e.result)).toEqual([notRunResult(5)]);
    const messages = await request(t.httpUrl).get('/api/sessions/runaway-ceiling/messages').expect(200);
    const last2 = (messages.body.messages as Array<{ role: string; content: string }>).at(-1);
    expect(last2).toMatchObject({ role: 'assistant', content: 'stopped at the ceiling' });
  });

  it('Scenario: one message with more calls than the ceiling runs only up to it', async () => {
    fake.setHandler((req) =>
      bodyOf(req).tools
        ? { toolCalls: Array.from({ length: 12 }, (_, i) => ({ name: 'count', arguments: JSON.stringify({ n: i }) })) }
        : { content: 'done' },
    );
    const events = await turn('runaway-wide', 'twelve at once');
    expect(events.at(-1)?.event).toBe('done');
    expect(executed).toHaveLength(5);
    expect(fake.completions).toHaveLength(2);
    expect(events.filter((e) => e.event === 'tool_result')).toHaveLength(12);
  });

  it('Scenario: an automation run whose model loops ends runaway_stopped in its run history', async () => {
    fake.setHandler(() => ({ toolCalls: [{ name: 'broken', arguments: '{}' }] }));
    const created = await request(t.httpUrl)
      .post('/api/automations')
      .send({
        name: 'Looping job',
        prompt: 'loop',
        schedule: { kind: 'once', at: new Date(Date.now() + 3_600_000).toISOString() },
        enabled: true,
        llm: { provider: 'openai_compatible', model: 'fake-model' },
        tools: null,
        mcp_servers: null,
        skills: null,
        approvals: 'deny',
        budget: null,
        max_run_seconds: 60,
        chat_mode: 'single',
        missed: 'run_once',
        delivery: null,
      })
      .expect(201);
    const id = (created.body as { id: string }).id;
    await request(t.httpUrl).post(`/api/automations/${id}/run`).expect(202);
    let runs: AutomationRun[] = [];
    for (let attempt = 0; attempt < 150; attempt++) {
      runs = (await request(t.httpUrl).get(`/api/automations/${id}/runs`)).body.runs as AutomationRun[];
      if (runs[0] && runs[0].outcome !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(runs[0]).toMatchObject({ outcome: 'runaway_stopped', trigger: 'manual' });
    expect(runs[0]?.error).toContain('repeated the same broken call 3 times');
    // three failed rounds and the call without tools: the loop did not go on
    expect(fake.completions).toHaveLength(4);
  });
});
