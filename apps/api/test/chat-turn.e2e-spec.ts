/**
 * A turn through the real gateway against the fake model (openspec chat "Requirement: Turn steps and event order",
 * agent-runner "Requirement: Real streaming"): event order, title, real streaming, tool calls accumulated across
 * chunks, parallel read-only tools, registry errors, the iteration limit, persistence and the turn.completed event.
 */
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { MAX_ITERATIONS_NUDGE } from '../src/agent/agent-runner';
import { TOOL_ERROR_HINT, ToolRegistry } from '../src/agent/tool-registry';
import { TURN_COMPLETED_EVENT, type TurnCompletedEvent } from '../src/events/app-events';
import { HistoryLogStore } from '../src/memory/history-log.store';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, eventNamesCollapsed, joinedDeltas, WsTestClient } from './support/ws-client';

interface CompletionBody {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ function: { name: string } }>;
  tool_choice?: string;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }>;
}

const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;

function testTool(name: string, execute: AgentTool['execute'], readOnly = false): AgentTool {
  return {
    name,
    description: `test tool ${name}`,
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
    readOnly,
    execute,
  };
}

async function readHistory(t: TestApp, chatId: string): Promise<Array<Record<string, unknown>>> {
  const text = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function names(events: ServerEvent[]): string[] {
  return events.map((e) => e.event);
}

describe('chat turn', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let registry: ToolRegistry;
  let chatCounter = 0;
  const newChatId = () => `turn-chat-${++chatCounter}`;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    registry = t.app.get(ToolRegistry);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  /** Sends a message and resolves with the chat's events up to `done` or `error`. */
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

  it('Scenario: a plain turn streams deltas, then stream_end and done with usage, in that order', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['Hello', ', ', 'world', '!'], usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } });
    const events = await turn(chatId, 'Say hello');
    expect(eventNamesCollapsed(events)).toEqual(['session_updated', 'delta', 'stream_end', 'done']);
    expect(joinedDeltas(events)).toBe('Hello, world!');
    const streamIds = new Set(events.filter((e) => 'stream_id' in e).map((e) => (e as { stream_id: number }).stream_id));
    expect(streamIds.size).toBe(1);
    expect(Number.isInteger([...streamIds][0])).toBe(true);
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    expect(done).toMatchObject({ chat_id: chatId, cancelled: false, usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } });
    // the provider said nothing about its prompt cache: no cached_tokens
    expect(done.usage).not.toHaveProperty('cached_tokens');
    expect(typeof done.duration_sec).toBe('number');

    const body = bodyOf(fake.completions[0]);
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.tool_choice).toBe('auto');
    expect(body.tools?.map((tool) => tool.function.name)).toContain('save_memory');
    expect(body.messages[0]?.role).toBe('system');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello' });

    // done comes after persistence: the answer is readable at once
    const messages = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`);
    expect(messages.body.messages).toEqual([
      { role: 'user', content: 'Say hello', cursor: 1 },
      {
        role: 'assistant',
        content: 'Hello, world!',
        cursor: 2,
        // additive: the turn's usage and duration, kept for a reload
        usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
        duration_ms: expect.any(Number),
      },
    ]);
  });

  it('Scenario: the first message titles the chat (collapsed whitespace, 40 code points) with session_updated, once', async () => {
    const chatId = newChatId();
    const content = '  Plan   my\n\ttrip 🚀 to the mountains of the north and the lakes ';
    const first = await turn(chatId, content);
    const updated = first[0] as Extract<ServerEvent, { event: 'session_updated' }>;
    expect(updated.event).toBe('session_updated');
    const expected = Array.from('Plan my trip 🚀 to the mountains of the north and the lakes').slice(0, 40).join('');
    expect(updated.title).toBe(expected);
    expect(updated.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    const metadata = JSON.parse(await fs.readFile(join(t.config.memoryDir, chatId, 'metadata.json'), 'utf8')) as {
      title: string;
    };
    expect(metadata.title).toBe(expected);
    const second = await turn(chatId, 'And now?');
    expect(names(second)).not.toContain('session_updated');
  });

  it('Scenario: a chat that already has history but no title never gets an automatic title', async () => {
    const chatId = newChatId();
    await fs.mkdir(join(t.config.memoryDir, chatId), { recursive: true });
    await fs.writeFile(
      join(t.config.memoryDir, chatId, 'history.jsonl'),
      '{"cursor": 1, "timestamp": "2026-01-01 10:00", "role": "user", "content": "old question"}\n' +
        '{"cursor": 2, "timestamp": "2026-01-01 10:00", "role": "assistant", "content": "old answer"}\n',
    );
    const events = await turn(chatId, 'new question');
    expect(names(events)).not.toContain('session_updated');
    expect(bodyOf(fake.completions[0]).messages.slice(1)).toEqual([
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
      { role: 'user', content: 'new question' },
    ]);
    expect(existsSync(join(t.config.memoryDir, chatId, 'metadata.json'))).toBe(false);
  });

  it('Scenario: done reports the cached prompt tokens the provider reported, summed over the model calls', async () => {
    const chatId = newChatId();
    fake.enqueue(
      {
        toolCalls: [{ id: 'call_c', name: 'list_dir', arguments: '{"path":""}' }],
        usage: { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 0 } },
      },
      { content: 'listed', usage: { prompt_tokens: 1100, completion_tokens: 5, total_tokens: 1105, prompt_tokens_details: { cached_tokens: 896 } } },
    );
    const events = await turn(chatId, 'list the workspace');
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    expect(done.usage).toEqual({ prompt_tokens: 2100, completion_tokens: 15, total_tokens: 2115, cached_tokens: 896 });
    // the answer keeps them in history: a reopened chat shows the same numbers
    const messages = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`);
    expect((messages.body as { messages: Array<{ usage?: unknown }> }).messages.at(-1)?.usage).toEqual(done.usage);
  });

  it("Scenario: DeepSeek's prompt_cache_hit_tokens count as cached prompt tokens", async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'cached', usage: { prompt_tokens: 1200, completion_tokens: 4, total_tokens: 1204, prompt_cache_hit_tokens: 1024 } });
    const events = await turn(chatId, 'again');
    const done = events.at(-1) as Extract<ServerEvent, { event: 'done' }>;
    expect(done.usage).toEqual({ prompt_tokens: 1200, completion_tokens: 4, total_tokens: 1204, cached_tokens: 1024 });
  });

  it('Scenario: a model stream that arrives in one network read reaches the client as one delta event', async () => {
    const chatId = newChatId();
    const tokens = Array.from({ length: 300 }, (_, i) => `tok${i} `);
    // one SSE event (one chunk of the chunked body) per token, the whole response in one socket write
    fake.enqueue({ chunks: tokens, oneWrite: true });
    const events = await turn(chatId, 'all at once');
    const deltas = events.filter((e): e is Extract<ServerEvent, { event: 'delta' }> => e.event === 'delta');
    expect(deltas).toHaveLength(1);
    expect(deltas[0]!.text).toBe(tokens.join(''));
    expect(names(events).slice(-2)).toEqual(['stream_end', 'done']);
  });

  it('Scenario: deltas arrive while the model is still streaming (real streaming, no buffering)', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['First ', 'words '], hangAfterChunks: true });
    client.sendMessage(chatId, 'stream please');
    await client.waitForText(chatId, 'First words ');
    // the model has not finished its response: the text reached the client anyway
    expect(fake.completions[0]?.aborted).toBe(false);
    expect(client.chatEvents(chatId).some((e) => e.event === 'stream_end' || e.event === 'done')).toBe(false);
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'cancel', chat_id: chatId });
    expect((await done).cancelled).toBe(true);
  });

  it('Scenario: with a slow model the first delta comes long before the last chunk', async () => {
    const chatId = newChatId();
    fake.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 80 });
    await turn(chatId, 'slowly');
    const deltaIndexes = client.events
      .map((e, i) => (e.event === 'delta' && e.chat_id === chatId ? i : -1))
      .filter((i) => i >= 0);
    const first = client.arrivals[deltaIndexes[0] as number] as number;
    const last = client.arrivals[deltaIndexes.at(-1) as number] as number;
    expect(deltaIndexes).toHaveLength(5);
    expect(last - first).toBeGreaterThanOrEqual(250);
  });

  it('Scenario: tool calls split across chunks are accumulated and executed; events carry call ids and arguments', async () => {
    const chatId = newChatId();
    const received: Array<Record<string, unknown>> = [];
    registry.register(
      testTool('record_args', async (args) => {
        received.push(args);
        return `recorded ${String(args['text'])}`;
      }),
    );
    const longArgs = { text: 'a fairly long argument string that is split into many chunks', n: 3, nested: { k: [1, 2] } };
    fake.enqueue(
      {
        content: 'Let me check. ',
        toolCalls: [
          { id: 'call_one', name: 'record_args', arguments: JSON.stringify(longArgs) },
          { name: 'record_args', arguments: '{"text":"second","api_key":"sk-supersecret123456"}' },
        ],
      },
      { content: 'Done recording.' },
    );
    const events = await turn(chatId, 'record things');
    registry.unregister('record_args');

    expect(received).toEqual([longArgs, { text: 'second', api_key: 'sk-supersecret123456' }]);
    expect(eventNamesCollapsed(events)).toEqual([
      'session_updated',
      'delta',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'delta',
      'stream_end',
      'done',
    ]);
    const calls = events.filter((e) => e.event === 'tool_call') as Array<Extract<ServerEvent, { event: 'tool_call' }>>;
    const results = events.filter((e) => e.event === 'tool_result') as Array<Extract<ServerEvent, { event: 'tool_result' }>>;
    expect(calls[0]).toMatchObject({ tool_name: 'record_args', call_id: 'call_one', arguments: JSON.stringify(longArgs) });
    expect(calls[1]?.call_id).toBeTruthy();
    expect(calls[1]?.call_id).not.toBe('call_one');
    expect(calls[1]?.arguments).not.toContain('sk-supersecret123456');
    expect(results.map((r) => [r.call_id, r.ok, r.result])).toEqual([
      ['call_one', true, `recorded ${longArgs.text}`],
      [calls[1]?.call_id, true, 'recorded second'],
    ]);
    expect(results.every((r) => typeof r.duration_ms === 'number')).toBe(true);

    // the second model call sees the assistant tool-call message and both results, in call order
    const second = bodyOf(fake.completions[1]).messages;
    const assistant = second.at(-3) as { role: string; tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> };
    expect(assistant.role).toBe('assistant');
    expect(assistant.tool_calls.map((c) => c.id)).toEqual(['call_one', calls[1]?.call_id]);
    expect(assistant.tool_calls[0]?.function.arguments).toBe(JSON.stringify(longArgs));
    expect(second.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_one', content: `recorded ${longArgs.text}` },
      { role: 'tool', tool_call_id: calls[1]?.call_id, content: 'recorded second' },
    ]);

    // persisted: user, tool_calls, tool, tool, assistant (openspec memory)
    const history = await readHistory(t, chatId);
    expect(history.map((r) => r['role'])).toEqual(['user', 'tool_calls', 'tool', 'tool', 'assistant']);
    expect(history.at(-1)).toMatchObject({ content: 'Done recording.' });
  });

  it('Scenario: two read-only calls of one message run at the same time and keep their order', async () => {
    const chatId = newChatId();
    let started = 0;
    let releaseBoth!: () => void;
    const bothStarted = new Promise<void>((resolve) => (releaseBoth = resolve));
    let finishSlow!: () => void;
    const fastFinished = new Promise<void>((resolve) => (finishSlow = resolve));
    // bounded waits: if the calls ran one after the other, each gives up after 3 s and reports "ran alone"
    const timers: NodeJS.Timeout[] = [];
    const bounded = <T>(promise: Promise<T>) =>
      Promise.race([
        promise.then(() => true),
        new Promise<boolean>((resolve) => timers.push(setTimeout(() => resolve(false), 3000))),
      ]);
    registry.register(
      testTool(
        'probe_slow',
        async () => {
          if (++started === 2) releaseBoth();
          const overlapped = await bounded(bothStarted);
          await bounded(fastFinished); // finishes after probe_fast
          return overlapped ? 'slow overlapped' : 'slow ran alone';
        },
        true,
      ),
    );
    registry.register(
      testTool(
        'probe_fast',
        async () => {
          if (++started === 2) releaseBoth();
          const overlapped = await bounded(bothStarted);
          finishSlow();
          return overlapped ? 'fast overlapped' : 'fast ran alone';
        },
        true,
      ),
    );
    fake.enqueue(
      {
        toolCalls: [
          { id: 'c_slow', name: 'probe_slow', arguments: '{}' },
          { id: 'c_fast', name: 'probe_fast', arguments: '{}' },
        ],
      },
      { content: 'both done' },
    );
    const events = await turn(chatId, 'probe');
    registry.unregister('probe_slow');
    registry.unregister('probe_fast');
    for (const timer of timers) clearTimeout(timer);

    const results = events.filter((e) => e.event === 'tool_result') as Array<Extract<ServerEvent, { event: 'tool_result' }>>;
    // completion order: fast first; model order: call order
    expect(results.map((r) => r.call_id)).toEqual(['c_fast', 'c_slow']);
    expect(bodyOf(fake.completions[1]).messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'c_slow', content: 'slow overlapped' },
      { role: 'tool', tool_call_id: 'c_fast', content: 'fast overlapped' },
    ]);
  });

  it('Scenario: a tool with side effects runs alone, in order, between read-only ones', async () => {
    const chatId = newChatId();
    const log: string[] = [];
    const recorder = (name: string, readOnly: boolean) =>
      testTool(
        name,
        async () => {
          log.push(`start ${name}`);
          await new Promise((resolve) => setImmediate(resolve));
          log.push(`end ${name}`);
          return name;
        },
        readOnly,
      );
    registry.register(recorder('ro_one', true));
    registry.register(recorder('writer', false));
    registry.register(recorder('ro_two', true));
    fake.enqueue(
      {
        toolCalls: [
          { name: 'ro_one', arguments: '{}' },
          { name: 'writer', arguments: '{}' },
          { name: 'ro_two', arguments: '{}' },
        ],
      },
      { content: 'ok' },
    );
    await turn(chatId, 'mixed');
    for (const name of ['ro_one', 'writer', 'ro_two']) registry.unregister(name);
    expect(log).toEqual(['start ro_one', 'end ro_one', 'start writer', 'end writer', 'start ro_two', 'end ro_two']);
  });

  it('Scenario: unknown tools, invalid JSON arguments and throwing tools go back to the model as tool errors', async () => {
    const chatId = newChatId();
    registry.register(
      testTool('explodes', async () => {
        throw new Error('disk on fire');
      }),
    );
    fake.enqueue(
      {
        toolCalls: [
          { id: 'c1', name: 'no_such_tool', arguments: '{}' },
          { id: 'c2', name: 'save_memory', arguments: '{"content": "unterminated' },
          { id: 'c3', name: 'explodes', arguments: '{}' },
        ],
      },
      { content: 'I will try something else.' },
    );
    const events = await turn(chatId, 'break things');
    registry.unregister('explodes');
    expect(names(events).slice(-2)).toEqual(['stream_end', 'done']);
    const results = events.filter((e) => e.event === 'tool_result') as Array<Extract<ServerEvent, { event: 'tool_result' }>>;
    expect(results.map((r) => r.ok)).toEqual([false, false, false]);
    const tools = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool');
    expect(tools[0]?.content).toMatch(/^Error: Tool 'no_such_tool' not found\. Available: .*save_memory/);
    expect(tools[1]?.content).toMatch(/^Error: Invalid arguments for save_memory: the arguments are not valid JSON/);
    expect(tools[2]?.content).toBe(`Error executing explodes: disk on fire${TOOL_ERROR_HINT}`);
    for (const message of tools) expect(message.content?.endsWith(TOOL_ERROR_HINT)).toBe(true);
    // MEMORY.md was not touched by the invalid call
    expect(existsSync(join(t.config.memoryDir, 'MEMORY.md'))).toBe(false);
  });

  it('Scenario: save_memory writes MEMORY.md; the chat keeps its system prompt and a new chat sees the fact', async () => {
    const chatId = newChatId();
    fake.enqueue(
      { toolCalls: [{ name: 'save_memory', arguments: '{"content":"The user prefers green tea"}' }] },
      { content: 'Noted.' },
      { content: 'You like green tea.' },
      { content: 'Hello again.' },
    );
    await turn(chatId, 'Remember that I prefer green tea');
    await turn(chatId, 'What do I like?');
    // the same chat: the system prompt of the first request, byte for byte; the fact is in the conversation
    expect(bodyOf(fake.completions[2]).messages[0]?.content).toBe(bodyOf(fake.completions[0]).messages[0]?.content);
    expect(JSON.stringify(bodyOf(fake.completions[2]).messages)).toContain('The user prefers green tea');
    const other = newChatId();
    await turn(other, 'Hello');
    const system = bodyOf(fake.completions[3]).messages[0]?.content ?? '';
    expect(system).toContain('\n\n## Remembered information\n');
    expect(system).toMatch(/\[\d{4}-\d\d-\d\d \d\d:\d\d\] The user prefers green tea/);
    // previous turn with its tool round is part of the history sent to the model
    expect(bodyOf(fake.completions[2]).messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });

  it('Scenario: turn.completed is published after a successful turn', async () => {
    const chatId = newChatId();
    const bus = t.app.get(EventEmitter2);
    const seen: TurnCompletedEvent[] = [];
    const listener = (event: TurnCompletedEvent) => seen.push(event);
    bus.on(TURN_COMPLETED_EVENT, listener);
    fake.enqueue({ content: 'fine', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    await turn(chatId, 'hello');
    bus.off(TURN_COMPLETED_EVENT, listener);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      chatId,
      provider: 'openai_compatible',
      model: 'fake-model',
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      answer: 'fine',
      userContent: 'hello',
    });
    expect(seen[0]?.turnId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("Scenario: the turn's log lines carry its chat id and turn id", async () => {
    const chatId = newChatId();
    registry.register(testTool('log_probe', async () => 'probed', true));
    fake.setHandler((req) =>
      bodyOf(req).messages.at(-1)?.role === 'tool' ? { content: 'done' } : { toolCalls: [{ name: 'log_probe', arguments: '{}' }] },
    );
    await turn(chatId, 'log me');
    const file = join(t.config.logDir, 'cashcode.log');
    let text = '';
    for (let i = 0; i < 100 && !text.includes('event=agent.turn.completed'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      text = existsSync(file) ? await fs.readFile(file, 'utf8') : '';
    }
    const started = new RegExp(`ChatService request_id=- chat_id=${chatId} turn_id=([0-9a-f]{32}) event=agent\\.turn\\.started`).exec(text);
    expect(started).not.toBeNull();
    const turnId = started![1]!;
    for (const line of [
      `AgentRunner request_id=- chat_id=${chatId} turn_id=${turnId} event=tool.execution.completed`,
      `ChatService request_id=- chat_id=${chatId} turn_id=${turnId} event=agent.turn.completed`,
    ]) {
      expect(text).toContain(line);
    }
  });

  it('Scenario: the only running turn is appended on the event loop; with other turns running, through the thread pool', async () => {
    const memory = t.app.get(HistoryLogStore);
    const appends: Array<{ chatId: string; inline: boolean | undefined }> = [];
    const append = memory.appendTurn.bind(memory);
    const spy = jest.spyOn(memory, 'appendTurn').mockImplementation((chatId, user, durable, final, options) => {
      appends.push({ chatId, inline: options?.inline });
      return append(chatId, user, durable, final, options);
    });
    const alone = newChatId();
    const first = newChatId();
    const second = newChatId();
    try {
      await turn(alone, 'just me');
      // two chats at once: whichever finishes first does so while the other is still streaming
      fake.setHandler(() => ({ chunks: ['a', 'b', 'c'], chunkDelayMs: 40 }));
      const done = Promise.all([first, second].map((id) => client.next('done', (e) => e.chat_id === id)));
      client.sendMessage(first, 'one');
      client.sendMessage(second, 'two');
      await done;
    } finally {
      spy.mockRestore();
    }
    expect(appends[0]).toEqual({ chatId: alone, inline: true });
    expect(appends).toHaveLength(3);
    expect(appends.slice(1).map((a) => a.inline)).toContain(false);
    for (const chatId of [alone, first, second]) {
      expect((await readHistory(t, chatId)).map((r) => r['role'])).toEqual(['user', 'assistant']);
    }
  });
});

describe('chat turn: iteration limit', () => {
  let t: TestApp;
  let fake: FakeModelServer;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MAX_ITERATIONS: '2' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('Scenario: after the maximum iterations the model is nudged and answers once more without tools', async () => {
    const registry = t.app.get(ToolRegistry);
    registry.register(testTool('again', async () => 'more', true));
    fake.setHandler((req) =>
      bodyOf(req).tools ? { toolCalls: [{ name: 'again', arguments: '{}' }] } : { content: 'best effort answer' },
    );
    const client = await WsTestClient.connect(t.wsUrl);
    const done = client.next('done');
    client.sendMessage('loop-chat', 'loop forever');
    await done;
    await client.close();

    expect(fake.completions).toHaveLength(3);
    const last = bodyOf(fake.completions[2]);
    expect(last.tools).toBeUndefined();
    expect(last.tool_choice).toBeUndefined();
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: MAX_ITERATIONS_NUDGE });
    expect(client.ofType('tool_call')).toHaveLength(2);
    expect(client.ofType('delta').map((e) => e.text).join('')).toBe('best effort answer');

    // the nudge is never persisted
    const history = await fs.readFile(join(t.config.memoryDir, 'loop-chat', 'history.jsonl'), 'utf8');
    expect(history).not.toContain('maximum tool-call iterations');
    expect(history.trim().split('\n').map((l) => (JSON.parse(l) as { role: string }).role)).toEqual([
      'user',
      'tool_calls',
      'tool',
      'tool_calls',
      'tool',
      'assistant',
    ]);
  });
});
