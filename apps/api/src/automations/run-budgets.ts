/**
 * The budget and the tally of each running automation run (openspec automations "Requirement: Budget per run"): a
 * ModelCallGuard of the usage service, so the check sits where the spend limits sit — before every model call of the
 * run's chat (its sub-agents' included: a child never spends more than what remains), synchronously with the
 * reservation. The tally adds up the usage ledger's records of the run's chat
 * (`model_call.recorded`), which is also where a run's tokens and cost come from.
 *
 * A call is refused when the run's recorded use plus the call's estimated input would cross the budget (tokens, or
 * US dollars of calls priced in USD); the run then ends `budget_exceeded`.
 */
import type { AutomationBudget, UsageRecord } from '@cashcode/contracts';
import type { ModelCallGuard, ModelCallRequest } from '../usage/usage.service';
import { RunBudgetError } from './automations.errors';

export interface RunTally {
  tokens: number;
  /** summed USD cost; null once a call had no USD price */
  costUsd: number | null;
  calls: number;
}

interface OpenRun {
  budget: AutomationBudget | null;
  tally: RunTally;
}

export class RunBudgets implements ModelCallGuard {
  private readonly runs = new Map<string, OpenRun>();

  /** Starts counting the calls of a run's chat. */
  open(chatId: string, budget: AutomationBudget | null): RunTally {
    const tally: RunTally = { tokens: 0, costUsd: 0, calls: 0 };
    this.runs.set(chatId, { budget, tally });
    return tally;
  }

  close(chatId: string): void {
    this.runs.delete(chatId);
  }

  check(request: ModelCallRequest, estimate: { promptTokens: number; promptCost: { amount: number; currency: string } | undefined }) {
    // the run's sub-agents are recorded with its chat id: what they spend comes out of the same budget
    if ((request.purpose !== 'chat' && request.purpose !== 'subagent') || request.chatId === undefined) return null;
    const run = this.runs.get(request.chatId);
    if (!run?.budget) return null;
    const { budget, tally } = run;
    if (budget.tokens !== undefined && tally.tokens + estimate.promptTokens > budget.tokens) {
      return new RunBudgetError(
        `The run's budget of ${budget.tokens.toLocaleString('en-US')} tokens would be crossed by this model call: ` +
          `${tally.tokens.toLocaleString('en-US')} used, about ${estimate.promptTokens.toLocaleString('en-US')} more to send.`,
      );
    }
    const cost = estimate.promptCost?.currency === 'USD' ? estimate.promptCost.amount : 0;
    if (budget.usd !== undefined && tally.costUsd !== null && tally.costUsd + cost > budget.usd) {
      return new RunBudgetError(
        `The run's budget of ${budget.usd} USD would be crossed by this model call: ${roundUsd(tally.costUsd)} USD used.`,
      );
    }
    return null;
  }

  /** Adds a recorded call of a run's chat to its tally. */
  record(record: UsageRecord): void {
    if (record.chat_id === undefined || record.outcome === 'refused') return;
    const run = this.runs.get(record.chat_id);
    if (!run) return;
    const { tally } = run;
    tally.calls++;
    tally.tokens += record.total_tokens;
    if (tally.costUsd !== null) tally.costUsd = record.cost?.currency === 'USD' ? roundUsd(tally.costUsd + record.cost.amount) : null;
  }
}

export function roundUsd(amount: number): number {
  return Math.round(amount * 1e9) / 1e9;
}
