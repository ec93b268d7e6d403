import { ChunkWriter, completionObject, newCompletionIdentity, SSE_DONE, sseData } from './completion-chunks';

const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

describe('completion chunks', () => {
  const identity = newCompletionIdentity('cashcode', new Date('2026-01-01T00:00:00Z'));

  it('gives each request a chatcmpl id and the created time in seconds', () => {
    expect(identity.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(identity.created).toBe(1767225600);
    expect(newCompletionIdentity('cashcode').id).not.toBe(identity.id);
  });

  it('builds a chat.completion with the answer and usage', () => {
    expect(completionObject(identity, 'answer', usage)).toEqual({
      id: identity.id,
      object: 'chat.completion',
      created: 1767225600,
      model: 'cashcode',
      choices: [{ index: 0, message: { role: 'assistant', content: 'answer', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage,
    });
  });

  it('maps a stream to role, content, finish chunks (usage: null only with include_usage)', () => {
    const plain = new ChunkWriter(identity, false);
    expect(plain.role()).toEqual({
      id: identity.id,
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: 'cashcode',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }],
    });
    expect(plain.content('Hi').choices).toEqual([{ index: 0, delta: { content: 'Hi' }, finish_reason: null, logprobs: null }]);
    expect(plain.finish().choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }]);
    expect('usage' in plain.content('x')).toBe(false);

    const withUsage = new ChunkWriter(identity, true);
    expect(withUsage.content('x').usage).toBeNull();
    expect(withUsage.usage(usage)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage });
  });

  it('puts reasoning in reasoning_content, never in content', () => {
    const message = completionObject(identity, 'answer', usage, 'thought').choices[0]!.message;
    expect(message).toEqual({ role: 'assistant', content: 'answer', refusal: null, reasoning_content: 'thought' });
    expect(new ChunkWriter(identity, false).reasoning('step').choices).toEqual([
      { index: 0, delta: { reasoning_content: 'step' }, finish_reason: null, logprobs: null },
    ]);
  });

  it('frames SSE events', () => {
    expect(sseData({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });
});
