import { HttpStatus } from '@nestjs/common';
import { DomainError, validationProblem, type DomainProblem } from '../common/domain-error';
import type { ProblemFieldError } from '../common/problem-details';

export type AutomationErrorCode =
  /** a field of the automation is missing or malformed (field errors attached) */
  | 'invalid_automation'
  /** a cron expression that does not parse or never matches, an interval below the minimum, an impossible date */
  | 'invalid_schedule'
  /** a time zone that does not exist */
  | 'invalid_timezone'
  /** a budget of zero, a negative one, or one without tokens or money */
  | 'invalid_budget'
  /** a tool, MCP server or Skill the automation names does not exist */
  | 'unknown_tool'
  | 'unknown_mcp_server'
  | 'unknown_skill'
  /** the delivery target is not a conversation of an approved channel sender (or no channel is available) */
  | 'invalid_delivery'
  /** no automation with this id */
  | 'not_found'
  /** run now while a run of the automation is going */
  | 'automation_running'
  /** the automations file could not be written; nothing changed */
  | 'automation_save_failed';

function problem(code: AutomationErrorCode, errors: readonly ProblemFieldError[]): DomainProblem {
  switch (code) {
    case 'not_found':
      return { status: HttpStatus.NOT_FOUND };
    case 'automation_running':
      return { status: HttpStatus.CONFLICT };
    case 'automation_save_failed':
      return { status: HttpStatus.SERVICE_UNAVAILABLE };
    default:
      return validationProblem(errors, code);
  }
}

/** Coded domain error of the automations API, rendered as problem+json by the global filter. */
export class AutomationError extends DomainError<AutomationErrorCode> {
  constructor(
    code: AutomationErrorCode,
    message: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
  ) {
    super(code, message, problem(code, fieldErrors));
  }
}

/** A model call of an automation run was not made: the run's budget would be crossed (the run ends `budget_exceeded`). */
export class RunBudgetError extends DomainError<'budget_exceeded'> {
  constructor(message: string) {
    super('budget_exceeded', message, { status: HttpStatus.TOO_MANY_REQUESTS });
  }
}
