import { TokenVerifier, TrustedProxies } from '../common/http-security';
import { FailureThrottle } from '../common/failure-throttle';
import { openAiCompatEdgeMiddleware } from './openai-compat-edge';
import { chatTurnError, upstreamError } from './openai-compat-errors';
import { chatIdForUser } from './openai-compat.service';

describe('FailureThrottle', () => {
  it('throttles a client after the limit until its window ends', () => {
    let now = 1_000;
    const throttle = new FailureThrottle(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      expect(throttle.throttled('a')).toBe(false);
      throttle.fail('a');
    }
    expect(throttle.throttled('a')).toBe(true);
    expect(throttle.throttled('b')).toBe(false);
    expect(throttle.retryAfterSeconds('a')).toBe(60);
    now += 60_000;
    expect(throttle.throttled('a')).toBe(false);
  });
});

describe('error mapping', () => {
  it('maps provider failures to 502, timeouts to 504', () => {
    expect(upstreamError('fatal', 'x')).toMatchObject({ status: 502, type: 'upstream_error', code: 'upstream_fatal' });
    expect(upstreamError('timeout', 'x')).toMatchObject({ status: 504, code: 'upstream_timeout' });
  });

  it('maps chat turn error codes to OpenAI statuses', () => {
    expect(chatTurnError('llm_not_configured', 'd')).toMatchObject({ status: 503, code: 'llm_not_configured' });
    expect(chatTurnError('queue_full', 'd')).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'chat_busy' });
    expect(chatTurnError('rate_limit', 'd')).toMatchObject({ status: 502, code: 'upstream_rate_limit' });
    expect(chatTurnError('internal_error', 'd')).toMatchObject({ status: 500, type: 'server_error' });
  });

  it('maps a user string to a stable, valid chat id', () => {
    expect(chatIdForUser('alice')).toBe(chatIdForUser('alice'));
    expect(chatIdForUser('alice')).not.toBe(chatIdForUser('bob'));
    expect(chatIdForUser('x'.repeat(256))).toMatch(/^openai-user-[0-9a-f]{32}$/);
  });
});

describe('openAiCompatEdgeMiddleware', () => {
  function call(handler: ReturnType<typeof openAiCompatEdgeMiddleware>, authorization?: string): { status: number; code: string | null; next: boolean } {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    const req = { path: '/v1/models', method: 'GET', headers, socket: { remoteAddress: '127.0.0.1' } };
    const out = { status: 200, code: null as string | null, next: false };
    const res = {
      locals: {} as Record<string, unknown>,
      headersSent: false,
      setHeader: () => res,
      status: (status: number) => {
        out.status = status;
        return res;
      },
      json: (body: { error: { code: string } }) => {
        out.code = body.error.code;
        return res;
      },
    };
    handler(req as never, res as never, () => (out.next = true));
    return out;
  }

  it('Scenario: wrong keys are throttled but the right key always works', () => {
    const access = { enabled: true, verify: (presented: string) => (presented === 'cck_right-key' ? { id: 'k' } : null) };
    const handler = openAiCompatEdgeMiddleware(access, new TokenVerifier(null), new TrustedProxies([]), new FailureThrottle(2));
    expect(call(handler)).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(call(handler, 'Bearer wrong1')).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(call(handler, 'Bearer wrong2')).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(call(handler, 'Bearer wrong3')).toMatchObject({ status: 429, code: 'too_many_failed_attempts' });
    expect(call(handler)).toMatchObject({ status: 429 });
    expect(call(handler, 'Bearer cck_right-key')).toMatchObject({ next: true });
  });

  it('Scenario: the endpoint is off by default', () => {
    const handler = openAiCompatEdgeMiddleware({ enabled: false, verify: () => ({ id: 'k' }) }, new TokenVerifier(null), new TrustedProxies([]));
    expect(call(handler, 'Bearer anything')).toMatchObject({ status: 404, code: 'endpoint_disabled', next: false });
  });
});
