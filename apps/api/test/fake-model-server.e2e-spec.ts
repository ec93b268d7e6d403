import OpenAI from 'openai';
import { FakeModelServer } from './support/fake-model-server';

describe(FakeModelServer.name, () => {
  let fake: FakeModelServer;
  let client: OpenAI;

  beforeEach(async () => {
    fake = await FakeModelServer.start();
    client = new OpenAI({ baseURL: fake.baseUrl, apiKey: 'test-key', maxRetries: 0 });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('streams content and tool calls split across chunks, with usage', async () => {
    fake.enqueue({ content: 'hello world, streamed', toolCalls: [{ name: 'grep', arguments: '{"pattern":"abc","path":"x"}' }] });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let args = '';
    let name = '';
    let deltas = 0;
    let totalTokens = 0;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        text += delta.content;
        deltas++;
      }
      for (const call of delta?.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      totalTokens = chunk.usage?.total_tokens ?? totalTokens;
    }
    expect(text).toBe('hello world, streamed');
    expect(deltas).toBeGreaterThan(1);
    expect(name).toBe('grep');
    expect(JSON.parse(args)).toEqual({ pattern: 'abc', path: 'x' });
    expect(totalTokens).toBe(15);
  });

  it('answers non-streaming requests, lists models and scripts HTTP errors', async () => {
    fake.models = ['b', 'a'];
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['b', 'a']);
    fake.enqueue({ status: 429, headers: { 'retry-after': '1' } });
    await expect(client.chat.completions.create({ model: 'm', messages: [] })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const ok = await client.chat.completions.create({ model: 'm', messages: [] });
    expect(ok.choices[0]?.message.content).toBe('ok');
    expect(fake.completions).toHaveLength(2);
  });

  it('records an aborted request when the client cancels a hanging stream', async () => {
    fake.enqueue({ chunks: ['partial'], hangAfterChunks: true });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', messages: [], stream: true },
      { signal: controller.signal },
    );
    const iterate = (async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content === 'partial') controller.abort();
      }
    })();
    await iterate.catch(() => undefined);
    await fake.waitForAbort(0);
    expect(fake.completions[0]?.aborted).toBe(true);
  });
});
