/**
 * One non-streaming model call for background work (consolidation summaries, Dream phases, chat titles): acquires a
 * client lease for the selection's provider, calls the model with a deadline and no SDK retries (the next trigger
 * retries), and always releases the lease. Failures become a BackgroundModelError with a provider error kind; nothing
 * else leaks.
 *
 * Every call is checked against the spend limits first and recorded in the usage ledger with the caller's purpose
 * (openspec usage): a refused call is not sent and fails with the kind `spend_limit_reached` (the job is skipped).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { LlmSelection, ModelCallPurpose } from '@cashcode/contracts';
import { SpendLimitError } from '../usage/usage.errors';
import { UsageService, type UsageReservation } from '../usage/usage.service';
import {
  LLM_CLIENT_PROVIDER,
  LlmNotConfiguredError,
  type LlmClientProvider,
  type ProviderErrorKind,
} from '../llm-settings/llm-provider';
import { classifyProviderError } from '../llm-settings/provider-errors';
import { completeText } from '../llm-settings/text-completion';

export type BackgroundModelFailure = ProviderErrorKind | 'not_configured' | 'spend_limit_reached';

export class BackgroundModelError extends Error {
  constructor(
    readonly kind: BackgroundModelFailure,
    message: string,
  ) {
    super(message);
    this.name = 'BackgroundModelError';
  }
}

export interface BackgroundCompletion {
  /** what the call is recorded as in the usage ledger (and which limits count it) */
  purpose: Extract<ModelCallPurpose, 'consolidation' | 'dream' | 'title' | 'evolution'>;
  /** the chat the work is for, when there is one */
  chatId?: string;
  selection: LlmSelection;
  system: string;
  user: string;
  timeoutMs: number;
  /** bound of the answer (`max_tokens`); the provider's default when absent */
  maxTokens?: number;
  /** aborts the call (shutdown) */
  signal?: AbortSignal;
}

@Injectable()
export class BackgroundModel {
  constructor(
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    /** the usage ledger and spend limits; without it (unit tests) nothing is checked or recorded */
    private readonly usage: UsageService,
  ) {}

  /** The model's answer text ('' when it sent none). Throws BackgroundModelError. */
  async complete(request: BackgroundCompletion): Promise<string> {
    let reservation: UsageReservation | undefined;
    try {
      reservation = this.usage.reserve({
        provider: request.selection.provider,
        model: request.selection.model,
        purpose: request.purpose,
        ...(request.chatId !== undefined ? { chatId: request.chatId } : {}),
        promptChars: request.system.length + request.user.length,
        ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
      });
    } catch (error) {
      if (error instanceof SpendLimitError) throw new BackgroundModelError('spend_limit_reached', error.message);
      throw error;
    }
    let lease;
    try {
      lease = this.llm.acquire(request.selection.provider);
    } catch (error) {
      if (reservation) this.usage.settle(reservation, { outcome: 'error', errorCode: 'not_configured' });
      if (error instanceof LlmNotConfiguredError) throw new BackgroundModelError('not_configured', error.message);
      throw error;
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, request.timeoutMs);
    timer.unref();
    const onAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    if (request.signal?.aborted) controller.abort();
    try {
      // the lease's protocol (OpenAI-compatible or Anthropic); a reasoning model's reasoning never comes back as text
      const { text, usage } = await completeText(lease.client, {
        model: request.selection.model,
        system: request.system,
        user: request.user,
        ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
        signal: controller.signal,
        timeoutMs: request.timeoutMs,
      });
      if (reservation) this.usage.settle(reservation, { outcome: 'ok', usage, answerChars: text.length });
      return text;
    } catch (error) {
      if (timedOut) {
        if (reservation) this.usage.settle(reservation, { outcome: 'error', errorCode: 'timeout' });
        throw new BackgroundModelError('timeout', `the model did not answer within ${Math.round(request.timeoutMs / 1000)} s`);
      }
      if (controller.signal.aborted) {
        if (reservation) this.usage.settle(reservation, { outcome: 'cancelled' });
        throw new BackgroundModelError('cancelled', 'the model call was cancelled');
      }
      const classified = classifyProviderError(error);
      if (reservation) this.usage.settle(reservation, { outcome: 'error', errorCode: classified.kind });
      throw new BackgroundModelError(classified.kind, classified.message);
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      lease.release();
    }
  }
}
