import type { MessageMetadata } from '@cashcode/contracts';
import type { HistoryRecord } from '../memory/memory.types';
import { planChatAction } from './chat-actions';

const metadata: MessageMetadata = { llm: { provider: 'openai_compatible', model: 'm1' } };

function rec(cursor: number, role: HistoryRecord['role'], content: string, extra: Partial<HistoryRecord> = {}): HistoryRecord {
  return { cursor, timestamp: '2026-01-01 10:00', role, content, ...extra };
}

describe('chat actions', () => {
  const history = [
    rec(1, 'user', 'hello', { mentioned_skills: [{ name: 'pdf' }] }),
    rec(2, 'assistant', 'hi'),
    rec(3, 'user', 'more'),
    rec(4, 'assistant', 'partial', { cancelled: true }),
  ];

  it('regenerate answers the last user message again, replacing it and what follows', () => {
    expect(planChatAction(history, { action: 'regenerate', metadata })).toEqual({
      ok: true,
      plan: { kind: 'resend', supersedes: 3, content: 'more', metadata },
    });
  });

  it('Scenario: regenerate without a previous message is refused', () => {
    expect(planChatAction([], { action: 'regenerate', metadata })).toMatchObject({ ok: false, code: 'nothing_to_regenerate' });
  });

  it('edit keeps the replaced message’s selections unless new ones are sent', () => {
    const check = planChatAction(history, { action: 'edit', cursor: 1, content: 'hello again', metadata });
    expect(check).toEqual({
      ok: true,
      plan: {
        kind: 'resend',
        supersedes: 1,
        content: 'hello again',
        metadata: { ...metadata, mentioned_skills: [{ name: 'pdf' }] },
      },
    });
  });

  it('Scenario: edit of a message that is not a shown user message is refused', () => {
    for (const cursor of [2, 99, 0]) {
      expect(planChatAction(history, { action: 'edit', cursor, content: 'x', metadata })).toMatchObject({
        ok: false,
        code: 'invalid_target',
      });
    }
    // a replaced message is no longer a target
    const replaced = [...history, rec(5, 'user', 'more!', { supersedes: 3 }), rec(6, 'assistant', 'ok')];
    expect(planChatAction(replaced, { action: 'edit', cursor: 3, content: 'x', metadata })).toMatchObject({
      code: 'invalid_target',
    });
    expect(planChatAction(replaced, { action: 'edit', cursor: 5, content: 'x', metadata })).toMatchObject({ ok: true });
  });

  it('continue needs a stopped last answer', () => {
    expect(planChatAction(history, { action: 'continue', metadata })).toEqual({
      ok: true,
      plan: { kind: 'continue', supersedes: 4, partial: 'partial', userContent: 'more', metadata },
    });
    expect(planChatAction(history.slice(0, 2), { action: 'continue', metadata })).toMatchObject({
      ok: false,
      code: 'nothing_to_continue',
    });
  });
});
