import { ApiError, toApiError } from './api-error';

const fallback = (status: number) => `Request failed (${status})`;

describe('toApiError', () => {
  it('Scenario: a problem+json body yields its detail and field errors', () => {
    const error = toApiError(
      422,
      'Unprocessable Entity',
      {
        type: 'about:blank',
        title: 'Unprocessable Entity',
        status: 422,
        detail: 'openai_compatible.base_url must be an http or https URL',
        errors: [{ field: 'openai_compatible.base_url', message: 'openai_compatible.base_url must be an http or https URL' }],
      },
      fallback,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(422);
    expect(error.detail).toBe('openai_compatible.base_url must be an http or https URL');
    expect(error.fieldErrors).toEqual([
      { field: 'openai_compatible.base_url', message: 'openai_compatible.base_url must be an http or https URL' },
    ]);
  });

  it('parses a JSON text body', () => {
    expect(toApiError(404, 'Not Found', '{"detail":"session not found"}', fallback).detail).toBe('session not found');
  });

  it('falls back to the text, the status text, then a generic message', () => {
    expect(toApiError(502, 'Bad Gateway', 'upstream down', fallback).detail).toBe('upstream down');
    expect(toApiError(502, 'Bad Gateway', null, fallback).detail).toBe('Bad Gateway');
    expect(toApiError(500, '', null, fallback).detail).toBe('Request failed (500)');
  });

  it('Scenario: a known problem code is shown localized; the server detail is kept', () => {
    const localize = (code: string) => (code === 'session_not_found' ? '该会话已不存在' : undefined);
    const error = toApiError(
      404,
      'Not Found',
      { type: 'about:blank', title: 'Not Found', status: 404, detail: 'session not found', code: 'session_not_found' },
      fallback,
      localize,
    );
    expect(error.detail).toBe('该会话已不存在');
    expect(error.code).toBe('session_not_found');
    expect(error.serverDetail).toBe('session not found');
  });

  it('Scenario: an unknown problem code falls back to the server detail', () => {
    const error = toApiError(
      409,
      'Conflict',
      { type: 'about:blank', title: 'Conflict', status: 409, detail: 'Skill pdf already exists', code: 'conflict' },
      fallback,
      () => undefined,
    );
    expect(error.detail).toBe('Skill pdf already exists');
    expect(error.code).toBe('conflict');
  });
});
