/**
 * What the rest of the server needs from LlmSettingsModule: a leased `openai` client per provider,
 * the "not configured" error and the provider error taxonomy (openspec llm-settings "Requirement: Provider clients,
 * generations and leases" and "Requirement: Provider error classification").
 */
import { HttpStatus } from '@nestjs/common';
import type { LlmProvider, LlmSelection } from '@cashcode/contracts';
import { DomainError } from '../common/domain-error';
import type { ProviderClient } from './provider-client';

/**
 * A client lease for one turn. Settings changes install a new generation; a lease keeps its generation's
 * client usable until release() (the old client is closed when its last lease is released).
 */
export interface ProviderLease {
  readonly provider: LlmProvider;
  /** the provider's SDK client: `openai` for OpenAI-compatible servers and Ollama, `@anthropic-ai/sdk` for Anthropic */
  readonly client: ProviderClient;
  readonly generation: number;
  release(): void;
}

/** Injection token of the LlmClientProvider port (provided by LlmSettingsModule with LlmSettingsService). */
export const LLM_CLIENT_PROVIDER = Symbol('LLM_CLIENT_PROVIDER');

/** The port the agent/chat/memory modules depend on; implemented by LlmSettingsService. */
export interface LlmClientProvider {
  /** Throws LlmNotConfiguredError when the provider has no installed client. */
  acquire(provider: LlmProvider): ProviderLease;
  /** Remembers the last (provider, model) used by a turn (Dream uses it). */
  rememberSelection(selection: LlmSelection): void;
  lastSelection(): LlmSelection | null;
  /** The model chosen for background jobs (Dream) in the LLM settings, if any. */
  backgroundSelection(): LlmSelection | null;
  /** Whether the provider has an installed client. */
  isReady(provider: LlmProvider): boolean;
  /** Whether the model takes image input (the provider's listing or the user's per-model setting); default false. */
  acceptsImages?(provider: LlmProvider, model: string): boolean;
  /** Whether the user turned extended thinking on for the model (a per-model setting); default false. */
  thinkingEnabled?(provider: LlmProvider, model: string): boolean;
}

/**
 * No client is installed for the provider. A coded domain error: REST answers 503 with code `llm_not_configured`,
 * the WS gateway an `error` event with the same code and message.
 */
export class LlmNotConfiguredError extends DomainError<'llm_not_configured'> {
  constructor(readonly provider: LlmProvider | null) {
    super(
      'llm_not_configured',
      provider
        ? `LLM is not configured (${provider}): open Settings > LLM settings to set up a connection.`
        : 'LLM is not configured: open Settings > LLM settings to set up a connection.',
      { status: HttpStatus.SERVICE_UNAVAILABLE },
    );
  }
}

export type ProviderErrorKind =
  | 'auth'
  | 'rate_limit'
  | 'quota'
  | 'timeout'
  | 'context_length'
  | 'transient'
  | 'fatal'
  | 'cancelled';

export interface ClassifiedProviderError {
  kind: ProviderErrorKind;
  /** rate_limit, timeout and transient are retryable; the rest are not */
  retryable: boolean;
  /** from Retry-After / retry-after-ms when the provider sent one */
  retryAfterMs: number | null;
  /** user-facing English message; never the provider's raw text, a key or a URL */
  message: string;
}

/**
 * A model call failed for good (not retryable, retries exhausted, or the stream broke after deltas were sent). A coded
 * domain error whose code is the provider error kind (`auth`, `rate_limit`, `timeout`, …) and whose message is the
 * sanitised provider message: REST answers 502 (504 for a timeout), the WS gateway an `error` event with that code.
 */
export class ModelCallError extends DomainError<ProviderErrorKind> {
  constructor(readonly classified: ClassifiedProviderError) {
    super(classified.kind, classified.message, {
      status: classified.kind === 'timeout' ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY,
    });
  }
}
