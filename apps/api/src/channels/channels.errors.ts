import { HttpStatus } from '@nestjs/common';
import { DomainError, validationProblem } from '../common/domain-error';

/**
 * Coded errors of the channels module, rendered as problem+json. The codes are shared ones the console already
 * translates: `validation` (a bad field, with per-field `errors`) and `not_found` (an unknown pairing code or sender).
 */
export type ChannelErrorCode = 'validation' | 'not_found';

export class ChannelError extends DomainError<ChannelErrorCode> {
  constructor(code: ChannelErrorCode, message: string, options: { field?: string } = {}) {
    super(
      code,
      message,
      code === 'validation'
        ? validationProblem([{ field: options.field ?? 'body', message }], 'validation')
        : { status: HttpStatus.NOT_FOUND },
    );
  }
}
