import { bearerToken, isAllowedHost, isAllowedOrigin, isCorsOrigin, TokenVerifier } from './http-security';

const config = {
  allowedHosts: ['box.lan', 'other.lan:9000'],
  allowedOrigins: ['http://127.0.0.1:8000', 'http://localhost:8000', 'https://app.example'],
};

describe('isAllowedHost', () => {
  it('Scenario: loopback names pass at any port', () => {
    for (const host of ['localhost', 'localhost:8000', '127.0.0.1:1', '[::1]:8765', 'LOCALHOST:80']) {
      expect(isAllowedHost(host, config)).toBe(true);
    }
  });

  it('Scenario: configured hosts pass, others (and rebinding names) do not', () => {
    expect(isAllowedHost('box.lan:8000', config)).toBe(true);
    expect(isAllowedHost('other.lan:9000', config)).toBe(true);
    expect(isAllowedHost('other.lan:9001', config)).toBe(false);
    expect(isAllowedHost('evil.example', config)).toBe(false);
    expect(isAllowedHost('127.0.0.1.evil.example', config)).toBe(false);
    expect(isAllowedHost('localhost@evil', config)).toBe(false);
    expect(isAllowedHost(undefined, config)).toBe(false);
    expect(isAllowedHost('', config)).toBe(false);
  });
});

describe('isAllowedOrigin', () => {
  it('Scenario: a missing Origin is allowed, a foreign or null one is not', () => {
    expect(isAllowedOrigin(undefined, config)).toBe(true);
    expect(isAllowedOrigin('http://evil.example', config)).toBe(false);
    expect(isAllowedOrigin('null', config)).toBe(false);
    expect(isAllowedOrigin('file://x', config)).toBe(false);
  });

  it('Scenario: allowlisted and same-origin requests pass', () => {
    expect(isAllowedOrigin('http://localhost:8000', config)).toBe(true);
    expect(isAllowedOrigin('https://app.example/', config)).toBe(true);
    expect(isAllowedOrigin('http://box.lan:8000', config, 'box.lan:8000')).toBe(true);
    expect(isAllowedOrigin('http://box.lan:8001', config, 'box.lan:8000')).toBe(false);
    expect(isAllowedOrigin('http://evil.example', config, 'evil.example')).toBe(false);
  });

  it('Scenario: CORS echoes only explicit allowlist entries', () => {
    expect(isCorsOrigin('http://localhost:8000', config)).toBe(true);
    expect(isCorsOrigin('http://box.lan:8000', config)).toBe(false);
  });
});

describe(TokenVerifier.name, () => {
  it('Scenario: disabled without a token', () => {
    const verifier = new TokenVerifier(null);
    expect(verifier.enabled).toBe(false);
    expect(verifier.check(undefined, 'a')).toBe('ok');
  });

  it('Scenario: only the exact token passes', () => {
    const verifier = new TokenVerifier('correct-horse-battery');
    expect(verifier.check('correct-horse-battery', 'a')).toBe('ok');
    expect(verifier.check('correct-horse-batterY', 'a')).toBe('unauthorized');
    expect(verifier.check('short', 'a')).toBe('unauthorized');
    expect(verifier.check(undefined, 'a')).toBe('unauthorized');
    expect(verifier.check('', 'a')).toBe('unauthorized');
  });

  it('Scenario: repeated failures are throttled until the window ends', () => {
    let now = 1_000;
    const verifier = new TokenVerifier('correct-horse-battery', 3, 10_000, () => now);
    for (let i = 0; i < 3; i++) expect(verifier.check('wrong', 'client')).toBe('unauthorized');
    expect(verifier.check('correct-horse-battery', 'client')).toBe('throttled');
    expect(verifier.retryAfterSeconds('client')).toBe(10);
    expect(verifier.check('correct-horse-battery', 'other')).toBe('ok');
    now += 10_001;
    expect(verifier.check('correct-horse-battery', 'client')).toBe('ok');
  });
});

describe('bearerToken', () => {
  it('Scenario: extracts the bearer credential only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
