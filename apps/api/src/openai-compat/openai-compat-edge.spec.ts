import { FailureThrottle } from './openai-compat-edge';
import { chatIdForUser, chatTurnError, upstreamError } from './openai-compat.service';

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
