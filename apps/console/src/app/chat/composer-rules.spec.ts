import { buildMessageFrame, canSend, isSendKey } from './composer-rules';

const selection = { provider: 'openai_compatible' as const, model: ' gpt-x ' };

describe('composer rules', () => {
  it('Scenario: the frame carries trimmed content and the model selection', () => {
    expect(buildMessageFrame({ chatId: 'c1', text: '  Hello\nworld  ', selection })).toEqual({
      ok: true,
      frame: {
        type: 'message',
        chat_id: 'c1',
        content: 'Hello\nworld',
        metadata: { llm: { provider: 'openai_compatible', model: 'gpt-x' } },
      },
    });
  });

  it('Scenario: a message needs an open chat, a model and text', () => {
    expect(buildMessageFrame({ chatId: null, text: 'x', selection })).toEqual({ ok: false, error: 'composer.error.noChat' });
    expect(buildMessageFrame({ chatId: 'c1', text: 'x', selection: null })).toEqual({ ok: false, error: 'composer.error.noModel' });
    expect(buildMessageFrame({ chatId: 'c1', text: ' \n\t', selection })).toEqual({ ok: false, error: 'composer.error.empty' });
    expect(buildMessageFrame({ chatId: 'c1', text: 'x', selection: { provider: 'ollama', model: 'a'.repeat(257) } })).toEqual({
      ok: false,
      error: 'composer.error.invalidModel',
    });
  });

  it('keeps skill and connector receipts, de-duplicated', () => {
    const result = buildMessageFrame({
      chatId: 'c1',
      text: 'x',
      selection,
      mentionedSkills: [{ name: 'weather', label: ' Weather ' }, { name: 'weather' }],
    });
    expect(result.ok && result.frame.metadata.mentioned_skills).toEqual([{ name: 'weather', label: 'Weather' }]);
  });

  it('Scenario: send is disabled while generating, loading models, or without text/model/chat', () => {
    const base = { text: 'hi', chatReady: true, hasModel: true, modelsLoading: false, generating: false };
    expect(canSend(base)).toBe(true);
    expect(canSend({ ...base, text: '  ' })).toBe(false);
    expect(canSend({ ...base, chatReady: false })).toBe(false);
    expect(canSend({ ...base, hasModel: false })).toBe(false);
    expect(canSend({ ...base, modelsLoading: true })).toBe(false);
    expect(canSend({ ...base, generating: true })).toBe(false);
  });

  it('Scenario: Enter sends, Shift+Enter and IME composition do not', () => {
    expect(isSendKey({ key: 'Enter', shiftKey: false, isComposing: false, keyCode: 13 })).toBe(true);
    expect(isSendKey({ key: 'Enter', shiftKey: true, isComposing: false, keyCode: 13 })).toBe(false);
    expect(isSendKey({ key: 'Enter', shiftKey: false, isComposing: true, keyCode: 229 })).toBe(false);
    expect(isSendKey({ key: 'a', shiftKey: false, isComposing: false, keyCode: 65 })).toBe(false);
  });
});
