import { ModelCallError } from '../agent/agent-runner';
import { LlmNotConfiguredError } from '../llm-settings/llm-provider';
import { DomainError, domainErrorEvent } from './domain-error';
import { buildProblem, toProblemInit } from './problem-details.filter';

describe('errors that cross transports', () => {
  it('Scenario: LlmNotConfiguredError is a domain error with the llm_not_configured code on REST and WS', () => {
    const error = new LlmNotConfiguredError('ollama');
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ name: 'LlmNotConfiguredError', code: 'llm_not_configured', provider: 'ollama' });
    expect(domainErrorEvent(error)).toEqual({
      detail: 'LLM is not configured (ollama): open Settings > LLM settings to set up a connection.',
      code: 'llm_not_configured',
    });
    expect(buildProblem(toProblemInit(error)!, { path: '/api/x' })).toMatchObject({
      status: 503,
      code: 'llm_not_configured',
      detail: error.message,
    });
  });

  it('Scenario: ModelCallError carries the provider error kind as its code and the sanitised message', () => {
    const error = new ModelCallError({ kind: 'auth', retryable: false, retryAfterMs: null, message: 'bad key' });
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ name: 'ModelCallError', message: 'bad key', code: 'auth' });
    expect(domainErrorEvent(error)).toEqual({ detail: 'bad key', code: 'auth' });
    expect(toProblemInit(error)).toMatchObject({ status: 502, code: 'auth', detail: 'bad key' });
    const timeout = new ModelCallError({ kind: 'timeout', retryable: true, retryAfterMs: null, message: 'slow' });
    expect(toProblemInit(timeout)).toMatchObject({ status: 504, code: 'timeout' });
  });
});
