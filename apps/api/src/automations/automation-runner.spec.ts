import type { AutomationRun } from '@cashcode/contracts';
import { automationChatId, deliveryText, isAutomationChat, newRunId, turnEnd } from './automation-runner';

const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

describe('automation run outcomes', () => {
  it('Scenario: a turn stopped by the runaway guard ends the run as runaway_stopped', () => {
    expect(turnEnd({ event: 'error', chat_id: 'c', code: 'runaway_stopped', detail: 'The same call repeated.' }, false)).toEqual({
      outcome: 'runaway_stopped',
      error: 'The same call repeated.',
    });
  });

  it('maps the end of a turn to the outcome of its run', () => {
    expect(turnEnd({ event: 'done', chat_id: 'c', duration_sec: 1, usage, cancelled: false }, false)).toEqual({ outcome: 'ok', error: null });
    expect(turnEnd({ event: 'done', chat_id: 'c', duration_sec: 1, usage, cancelled: true }, true)?.outcome).toBe('timeout');
    expect(turnEnd({ event: 'done', chat_id: 'c', duration_sec: 1, usage, cancelled: true }, false)?.outcome).toBe('cancelled');
    expect(turnEnd({ event: 'error', chat_id: 'c', code: 'budget_exceeded', detail: 'x' }, false)?.outcome).toBe('budget_exceeded');
    expect(turnEnd({ event: 'error', chat_id: 'c', code: 'rate_limit', detail: 'slow down' }, false)).toEqual({ outcome: 'error', error: 'slow down' });
    expect(turnEnd({ event: 'delta', chat_id: 'c', text: 'hi', stream_id: 1 }, false)).toBeNull();
  });

  it('gives run ids that sort by their start and chat ids that fit the chat id pattern', () => {
    const early = newRunId(1_000);
    const late = newRunId(2_000_000_000_000);
    expect(early < late).toBe(true);
    expect(early).toMatch(/^r[0-9a-z]{15}$/);
    expect(automationChatId({ id: 'a0123456789abcdef', chat_mode: 'single' }, late)).toBe('auto-a0123456789abcdef');
    expect(automationChatId({ id: 'a0123456789abcdef', chat_mode: 'per_run' }, late)).toMatch(/^auto-a0123456789abcdef-[0-9a-z]{8}$/);
  });
});

describe('what a run delivers to a channel', () => {
  const run = (outcome: AutomationRun['outcome'], error: string | null): AutomationRun =>
    ({ id: 'r', automation_id: 'a', started_at: '', ended_at: '', outcome, error, cost_usd: null, tokens: null, chat_id: 'auto-a', trigger: 'manual' });

  it('the answer under the name; another outcome in one line; an empty answer sends nothing', () => {
    expect(deliveryText('Digest', run('ok', null), '  The news.\n')).toBe('**Digest**\n\nThe news.');
    expect(deliveryText('Digest', run('ok', null), '  ')).toBeNull();
    expect(deliveryText('Digest', run('budget_exceeded', 'The run would cross\nits budget.'), '')).toBe(
      '**Digest**: ⚠️ the run ended `budget_exceeded` — The run would cross its budget.',
    );
    expect(deliveryText('Digest', run('cancelled', null), '')).toBe('**Digest**: ⚠️ the run ended `cancelled`');
  });

  it('automation chats are told apart from other chats', () => {
    expect(isAutomationChat(automationChatId({ id: 'a1', chat_mode: 'single' }, 'r1'))).toBe(true);
    expect(isAutomationChat(automationChatId({ id: 'a1', chat_mode: 'per_run' }, 'r0000000001abcdef'))).toBe(true);
    expect(isAutomationChat('tg-1-42')).toBe(false);
  });
});
