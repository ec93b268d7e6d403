import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { type ProblemFieldError, RequestValidationException } from './problem-details';

/** Flattens class-validator errors into `{ field, message }` with dotted field paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ProblemFieldError[] {
  const out: ProblemFieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) out.push({ field, message });
    if (error.children && error.children.length > 0) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

/** The one global ValidationPipe: unknown properties rejected, payloads transformed; failures → 422 problem+json. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors: ValidationError[]) => new RequestValidationException(flattenValidationErrors(errors)),
  });
}
