/**
 * The token budget of one sub-agent (openspec subagents "Requirement: Token budget of a child"): a check of the
 * child's own that the usage service asks before each of its model calls, with the spend limits and the other guards
 * (an automation run's budget, which a child's calls count against too). A call is refused when the tokens the
 * child's calls have used so far (its grandchildren's included) plus the call's estimated input would cross the
 * budget; the refusal is recorded as `refused` with code `budget_exceeded` and ends the child as a tool error for the
 * parent.
 */
import type { TokenUsage } from '@cashcode/contracts';
import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../../common/domain-error';
import type { ModelCallGuard } from '../../usage/usage.service';

/** A model call of a sub-agent was not made: its token budget would be crossed. */
export class SubagentBudgetError extends DomainError<'budget_exceeded'> {
  constructor(message: string) {
    super('budget_exceeded', message, { status: HttpStatus.TOO_MANY_REQUESTS });
  }
}

/** The guard of a child whose usage so far is `used` (the run's running total, updated in place). */
export function childBudget(maxTokens: number, used: Readonly<TokenUsage>): ModelCallGuard {
  return {
    check: (_request, estimate) => {
      if (used.total_tokens + estimate.promptTokens <= maxTokens) return null;
      return new SubagentBudgetError(
        `The sub-agent's budget of ${maxTokens.toLocaleString('en-US')} tokens would be crossed by its next model call: ` +
          `${used.total_tokens.toLocaleString('en-US')} used, about ${estimate.promptTokens.toLocaleString('en-US')} more to send.`,
      );
    },
  };
}
