/**
 * The model's reasoning through `/v1/chat/completions` (openspec openai-compat "Requirement: Reasoning passed
 * through"): the real `openai` SDK as the client, the started app, and the fake model servers speaking the providers'
 * documented wire formats — an OpenAI-compatible reasoning model (`reasoning_content`, OpenRouter's `reasoning`, a
 * `<think>` block) and Anthropic's extended thinking. The reasoning reaches the client as `reasoning_content` (the
 * DeepSeek / vLLM field), in chunk deltas or the completion's message, and never inside `content`.
 */
import OpenAI from 'openai';
import request from 'supertest';
import { ToolRegistry } from '../src/agent/tool-registry';
import type { AgentTool } from '../src/agent/agent-tool';
import { FakeAnthropicServer } from './support/fake-anthropic-server';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';

const CLAUDE = { provider: 'anthropic', model: 'claude-sonnet-4-5' };

/** A streamed chunk as a reasoning-aware client reads it (the SDK's types lack the field). */
type ReasoningDelta = { content?: string | null; reasoning_content?: string };

/** The content and the reasoning of a streamed completion, and the order in which their chunks came. */
async function streamed(client: OpenAI, model: string, headers: Record<string, string> = {}) {
  const stream = await client.chat.completions.create(
    { model, messages: [{ role: 'user', content: 'Think, then answer.' }], stream: true },
    { headers },
  );
  let content = '';
  let reasoning = '';
  const kinds: string[] = [];
  for await (const chunk of stream) {
    const delta = (chunk.choices[0]?.delta ?? {}) as ReasoningDelta;
    if (typeof delta.reasoning_content === 'string') {
      reasoning += delta.reasoning_content;
      if (kinds.at(-1) !== 'reasoning') kinds.push('reasoning');
    }
    if (delta.content) {
      content += delta.content;
      if (kinds.at(-1) !== 'content') kinds.push('content');
    }
  }
  return { content, reasoning, kinds };
}

describe('/v1 passes the model reasoning through', () => {
  let t: TestApp;
  let openai: FakeModelServer;
  let claude: FakeAnthropicServer;
  let client: OpenAI;

  beforeAll(async () => {
    openai = await FakeModelServer.start();
    claude = await FakeAnthropicServer.start();
    t = await startTestApp();
    await request(t.httpUrl)
      .put('/api/settings/llm')
      .send({
        openai_compatible: { base_url: openai.baseUrl, api_key: 'sk-test-fake-key-0123456789' },
        ollama: {},
        anthropic: { base_url: claude.baseUrl, api_key: claude.apiKey },
      })
      .expect(200);
    await request(t.httpUrl)
      .put('/api/settings/openai-compat')
      .send({ enabled: true, default_model: { provider: 'openai_compatible', model: 'fake-model' } })
      .expect(200);
    const created = await request(t.httpUrl).post('/api/settings/openai-compat/keys').send({ name: 'reasoning' }).expect(201);
    client = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: created.body.secret as string, maxRetries: 0 });
    const probe: AgentTool = {
      name: 'probe_tool',
      description: 'test tool',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: () => Promise.resolve('probed'),
    };
    t.app.get(ToolRegistry).register(probe);
    await request(t.httpUrl).put('/api/settings/llm/thinking-models').send({ ...CLAUDE, thinking: true }).expect(200);
  });

  afterAll(async () => {
    await t?.close();
    await openai?.close();
    await claude?.close();
  });

  beforeEach(() => openai.reset());

  it('Scenario: a reasoning model streams its reasoning to /v1 clients as reasoning_content, never in content', async () => {
    // DeepSeek / vLLM: reasoning_content; within a tool loop the second call reasons again (a new paragraph)
    openai.enqueue(
      { reasoning: 'First I probe.', toolCalls: [{ id: 'call_r1', name: 'probe_tool', arguments: '{}' }] },
      { reasoning: 'The probe answered.', content: 'Probed: done.' },
    );
    const deepseek = await streamed(client, 'cashcode');
    expect(deepseek).toEqual({ content: 'Probed: done.', reasoning: 'First I probe.\n\nThe probe answered.', kinds: ['reasoning', 'content'] });
    // OpenRouter's `reasoning` field and Qwen3's `<think>` block arrive the same way
    openai.enqueue({ reasoning: 'Routed thought.', reasoningAs: 'reasoning', content: 'Routed answer.' });
    expect(await streamed(client, 'cashcode')).toEqual({ content: 'Routed answer.', reasoning: 'Routed thought.', kinds: ['reasoning', 'content'] });
    openai.enqueue({ reasoning: 'Qwen thinks.', reasoningAs: 'think', content: 'Qwen answers.' });
    const qwen = await streamed(client, 'cashcode');
    expect(qwen.reasoning).toBe('Qwen thinks.');
    expect(qwen.content).toBe('Qwen answers.');
    expect(qwen.content).not.toContain('think');
  });

  it('Scenario: a non-streaming /v1 completion carries the reasoning as message.reasoning_content', async () => {
    openai.enqueue({ reasoning: 'Qwen thinks quietly.', reasoningAs: 'think', content: 'Quiet answer.' });
    const completion = await client.chat.completions.create({ model: 'cashcode', messages: [{ role: 'user', content: 'Hi' }] });
    const message = completion.choices[0]!.message as typeof completion.choices[0]['message'] & { reasoning_content?: string };
    expect(message.content).toBe('Quiet answer.');
    expect(message.reasoning_content).toBe('Qwen thinks quietly.');
    // without reasoning the field is absent, as with OpenAI's own models
    openai.enqueue({ content: 'Plain.' });
    const plain = await client.chat.completions.create({ model: 'cashcode', messages: [{ role: 'user', content: 'Hi' }] });
    expect(plain.choices[0]!.message).not.toHaveProperty('reasoning_content');
  });

  it("Scenario: Claude's extended thinking reaches /v1 clients as reasoning_content", async () => {
    const model = `cashcode:anthropic/${CLAUDE.model}`;
    claude.enqueue({ thinking: 'Claude ponders.', text: 'Claude answers.' });
    expect(await streamed(client, model)).toEqual({ content: 'Claude answers.', reasoning: 'Claude ponders.', kinds: ['reasoning', 'content'] });
    claude.enqueue({ thinking: 'Claude ponders again.', text: 'Claude answers again.' });
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
    const message = completion.choices[0]!.message as typeof completion.choices[0]['message'] & { reasoning_content?: string };
    expect(message).toMatchObject({ content: 'Claude answers again.', reasoning_content: 'Claude ponders again.' });
  });

  it('Scenario: a /v1 turn of a CashCode chat passes its reasoning through', async () => {
    openai.enqueue({ reasoning: 'Chat-bound thought.', content: 'Chat-bound answer.' });
    const result = await streamed(client, 'cashcode', { 'X-CashCode-Chat-Id': 'v1-reasoning-chat' });
    expect(result).toEqual({ content: 'Chat-bound answer.', reasoning: 'Chat-bound thought.', kinds: ['reasoning', 'content'] });
    const rows = (await request(t.httpUrl).get('/api/sessions/v1-reasoning-chat/messages').expect(200)).body as {
      messages: Array<{ role: string; content: string; reasoning?: string }>;
    };
    expect(rows.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Chat-bound answer.', reasoning: 'Chat-bound thought.' });
  });
});
