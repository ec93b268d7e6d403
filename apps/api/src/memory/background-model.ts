/**
 * One non-streaming model call for background work (consolidation summaries, Dream phases): acquires a client lease
 * for the selection's provider, calls the model with a deadline and no SDK retries (the next trigger retries), and
 * always releases the lease. Failures become a BackgroundModelError with a provider error kind; nothing else leaks.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { LlmSelection } from '@cashcode/contracts';
import {
  LLM_CLIENT_PROVIDER,
  LlmNotConfiguredError,
  type LlmClientProvider,
  type ProviderErrorKind,
} from '../llm-settings/llm-provider';
import { classifyProviderError } from '../llm-settings/provider-errors';

export type BackgroundModelFailure = ProviderErrorKind | 'not_configured';

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
  constructor(@Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider) {}

  /** The model's answer text ('' when it sent none). Throws BackgroundModelError. */
  async complete(request: BackgroundCompletion): Promise<string> {
    let lease;
    try {
      lease = this.llm.acquire(request.selection.provider);
    } catch (error) {
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
      const response = await lease.client.chat.completions.create(
        {
          model: request.selection.model,
          messages: [
            { role: 'system', content: request.system },
            { role: 'user', content: request.user },
          ],
          stream: false,
          ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
        },
        { signal: controller.signal, maxRetries: 0, timeout: request.timeoutMs },
      );
      const content = response.choices[0]?.message?.content;
      return typeof content === 'string' ? content : '';
    } catch (error) {
      if (timedOut) {
        throw new BackgroundModelError('timeout', `the model did not answer within ${Math.round(request.timeoutMs / 1000)} s`);
      }
      if (controller.signal.aborted) throw new BackgroundModelError('cancelled', 'the model call was cancelled');
      const classified = classifyProviderError(error);
      throw new BackgroundModelError(classified.kind, classified.message);
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      lease.release();
    }
  }
}
