import type { UsageRecord } from '@cashcode/contracts';
import { RunBudgets } from './run-budgets';

const estimate = { promptTokens: 1_000, promptCost: undefined };

function recorded(chatId: string, purpose: UsageRecord['purpose'], tokens: number): UsageRecord {
  return { chat_id: chatId, purpose, outcome: 'ok', total_tokens: tokens } as UsageRecord;
}

describe('RunBudgets', () => {
  it("Scenario: a sub-agent of a run counts in the run's budget and is stopped by it", () => {
    const budgets = new RunBudgets();
    budgets.open('auto-a1', { tokens: 50_000 });
    // the child's calls (purpose subagent, the run's chat id) count in the tally…
    budgets.record(recorded('auto-a1', 'subagent', 100_000));
    // …and the budget refuses the child's next call as it refuses the run's own
    expect(budgets.check({ provider: 'openai_compatible', model: 'm', purpose: 'subagent', chatId: 'auto-a1', promptChars: 10 }, estimate)?.code).toBe(
      'budget_exceeded',
    );
    expect(budgets.check({ provider: 'openai_compatible', model: 'm', purpose: 'chat', chatId: 'auto-a1', promptChars: 10 }, estimate)?.code).toBe(
      'budget_exceeded',
    );
  });

  it('leaves calls of other chats and background work alone', () => {
    const budgets = new RunBudgets();
    budgets.open('auto-a1', { tokens: 10 });
    expect(budgets.check({ provider: 'openai_compatible', model: 'm', purpose: 'subagent', chatId: 'other', promptChars: 10 }, estimate)).toBeNull();
    expect(budgets.check({ provider: 'openai_compatible', model: 'm', purpose: 'title', chatId: 'auto-a1', promptChars: 10 }, estimate)).toBeNull();
  });
});
