import { HttpStatus } from '@nestjs/common';
import { ProblemException, PROBLEM_TYPES, type ProblemFieldError } from '../common/problem-details';

export type LlmSettingsErrorCode =
  /** the settings file failed to load at startup and no PUT succeeded since */
  | 'settings_unreadable'
  /** writing the settings file failed; nothing changed */
  | 'settings_save_failed'
  /** a submitted value is invalid (field-level errors attached) */
  | 'invalid_settings'
  /** a save would leave no ready provider */
  | 'no_provider_ready'
  /** `/test` asked for a provider that is not ready in the submitted draft */
  | 'provider_not_ready'
  /** `/test`: listing the models failed (sanitised message) */
  | 'connection_failed';

/** Coded domain error of LlmSettingsModule, mapped to HTTP once (toHttpException). Messages are user-facing. */
export class LlmSettingsError extends Error {
  constructor(
    readonly code: LlmSettingsErrorCode,
    message: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
  ) {
    super(message);
    this.name = 'LlmSettingsError';
  }
}

export const LLM_SETTINGS_MESSAGES = {
  unreadable: 'the LLM settings file is invalid or unreadable',
  saveFailed: 'unable to save the LLM settings file',
  noProvider: 'at least one provider connection is required',
  keyConflict: 'api_key and clear_api_key cannot be submitted together',
  originNotAllowed: 'Origin is not allowed',
} as const;

export function toHttpException(error: LlmSettingsError): ProblemException {
  switch (error.code) {
    case 'settings_unreadable':
    case 'settings_save_failed':
      return new ProblemException(HttpStatus.SERVICE_UNAVAILABLE, error.message, { code: error.code });
    case 'invalid_settings':
      return new ProblemException(HttpStatus.UNPROCESSABLE_ENTITY, error.message, {
        code: error.code,
        type: PROBLEM_TYPES.validation,
        errors: [...error.fieldErrors],
      });
    case 'no_provider_ready':
    case 'provider_not_ready':
      return new ProblemException(HttpStatus.UNPROCESSABLE_ENTITY, error.message, {
        code: error.code,
        ...(error.fieldErrors.length > 0 ? { errors: [...error.fieldErrors] } : {}),
      });
    case 'connection_failed':
      return new ProblemException(HttpStatus.BAD_REQUEST, error.message, { code: error.code });
  }
}
