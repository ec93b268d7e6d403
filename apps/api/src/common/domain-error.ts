import { HttpStatus } from '@nestjs/common';
import { PROBLEM_TYPES, type ProblemFieldError } from './problem-details';

/** How a coded domain error is answered over HTTP (RFC 9457 problem+json; `detail` is the error's message). */
export interface DomainProblem {
  status: number;
  /** the problem's `code`; the error's own code when absent */
  code?: string;
  type?: string;
  errors?: readonly ProblemFieldError[];
  /** additive members of the problem body (e.g. `member`, `limit`); never override the standard ones */
  extensions?: Readonly<Record<string, unknown>>;
}

/** A 422 validation problem (`urn:cashcode:problem:validation-error`) with per-field `errors`. */
export function validationProblem(errors: readonly ProblemFieldError[], code?: string): DomainProblem {
  return { status: HttpStatus.UNPROCESSABLE_ENTITY, type: PROBLEM_TYPES.validation, errors, ...(code ? { code } : {}) };
}

/**
 * Base of every module's coded domain error: a `code` from the module's union, a user-facing message and the HTTP
 * problem it maps to. Each module computes that problem once, with an exhaustive switch (or a Record) over its codes,
 * and the global ProblemDetailsFilter renders it for every route — no per-module interceptor or mapper. The WS
 * gateway reports the same error as an `error` event with `domainErrorEvent` (its `code` and message); tool results
 * switch on `code`.
 */
export abstract class DomainError<Code extends string = string> extends Error {
  /** read by the problem-details filter */
  readonly httpStatus: number;

  protected constructor(
    readonly code: Code,
    message: string,
    readonly problem: DomainProblem,
  ) {
    super(message);
    this.name = new.target.name;
    this.httpStatus = problem.status;
  }
}

/** The `detail` and `code` of the WS `error` event that reports a domain error (the same message REST sends). */
export function domainErrorEvent(error: DomainError): { detail: string; code: string } {
  return { detail: error.message, code: error.code };
}
