import { automationChatId, newRunId, turnEnd } from './automation-runner';

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
