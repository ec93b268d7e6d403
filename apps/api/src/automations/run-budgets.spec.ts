import type { UsageRecord } from '@cashcode/contracts';
import type { ModelCallRequest } from '../usage/usage.service';
import { RunBudgets } from './run-budgets';

const call = (purpose: ModelCallRequest['purpose'], chatId = 'run-chat'): ModelCallRequest => ({
  provider: 'openai_compatible',
  model: 'm',
  purpose,
  chatId,
  promptChars: 0,
});
const recorded = (purpose: string, total: number): UsageRecord =>
  ({ chat_id: 'run-chat', purpose, outcome: 'ok', total_tokens: total }) as unknown as UsageRecord;
const estimate = (promptTokens: number) => ({ promptTokens, promptCost: undefined });

describe('RunBudgets', () => {
  it("counts a child's calls against the run's budget and holds them to what remains", () => {
    const budgets = new RunBudgets();
    budgets.open('run-chat', { tokens: 10_000 });
    budgets.record(recorded('chat', 6_000));
    // the child's calls are recorded with the run's chat id and count against the run
    expect(budgets.check(call('subagent'), estimate(3_000))).toBeNull();
    budgets.record(recorded('subagent', 3_500));
    const refusal = budgets.check(call('subagent'), estimate(1_000));
    expect(refusal).toMatchObject({ code: 'budget_exceeded' });
    expect(refusal?.message).toContain('9,500 used');
    // the run's own next call is held to the same remainder
    expect(budgets.check(call('chat'), estimate(1_000))).toMatchObject({ code: 'budget_exceeded' });
  });

  it('leaves calls of other chats and of background purposes alone', () => {
    const budgets = new RunBudgets();
    budgets.open('run-chat', { tokens: 10 });
    expect(budgets.check(call('subagent', 'other-chat'), estimate(1_000))).toBeNull();
    expect(budgets.check(call('consolidation'), estimate(1_000))).toBeNull();
    budgets.close('run-chat');
    expect(budgets.check(call('subagent'), estimate(1_000))).toBeNull();
  });
});
