import { HttpStatus } from '@nestjs/common';
import { DomainError, type DomainProblem, validationProblem } from '../common/domain-error';
import type { ProblemFieldError } from '../common/problem-details';

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

/**
 * Coded domain error of LlmSettingsModule; its HTTP problem is chosen once (llmSettingsProblem) and rendered by the
 * global problem-details filter. Messages are user-facing.
 */
export class LlmSettingsError extends DomainError<LlmSettingsErrorCode> {
  constructor(
    code: LlmSettingsErrorCode,
    message: string,
    readonly fieldErrors: readonly ProblemFieldError[] = [],
    /** additive problem members (e.g. a connection test's `reason`) */
    extensions?: Readonly<Record<string, unknown>>,
  ) {
    super(code, message, { ...llmSettingsProblem(code, fieldErrors), ...(extensions ? { extensions } : {}) });
  }
}

export const LLM_SETTINGS_MESSAGES = {
  unreadable: 'the LLM settings file is invalid or unreadable',
  saveFailed: 'unable to save the LLM settings file',
  noProvider: 'at least one provider connection is required',
  keyConflict: 'api_key and clear_api_key cannot be submitted together',
  keyOriginMoved: 'The base URL moved to another origin; enter the API key for it again (or clear the stored key)',
  keyUnbound: 'The stored API key was saved without a base URL; enter the API key for this base URL again (or clear the stored key)',
  originNotAllowed: 'Origin is not allowed',
} as const;

function llmSettingsProblem(code: LlmSettingsErrorCode, fieldErrors: readonly ProblemFieldError[]): DomainProblem {
  switch (code) {
    case 'settings_unreadable':
    case 'settings_save_failed':
      return { status: HttpStatus.SERVICE_UNAVAILABLE };
    case 'invalid_settings':
      return validationProblem(fieldErrors);
    case 'no_provider_ready':
    case 'provider_not_ready':
      return { status: HttpStatus.UNPROCESSABLE_ENTITY, ...(fieldErrors.length > 0 ? { errors: fieldErrors } : {}) };
    case 'connection_failed':
      return { status: HttpStatus.BAD_REQUEST };
  }
}
