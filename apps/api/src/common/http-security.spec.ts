import { parseTrustedProxies } from '../config/app-config';
import {
  bearerToken,
  clientKey,
  isAllowedHost,
  isAllowedOrigin,
  isCorsOrigin,
  isOpenApiRequest,
  TokenVerifier,
  cookieValues,
  sessionCookieName,
  TrustedProxies,
} from './http-security';

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

  it('Scenario: repeated failures are throttled until the window ends; the right token is never refused', () => {
    let now = 1_000;
    const verifier = new TokenVerifier('correct-horse-battery', 3, 10_000, () => now);
    for (let i = 0; i < 3; i++) expect(verifier.check('wrong', 'client')).toBe('unauthorized');
    expect(verifier.check('wrong', 'client')).toBe('throttled');
    expect(verifier.check(undefined, 'client')).toBe('throttled');
    expect(verifier.retryAfterSeconds('client')).toBe(10);
    expect(verifier.check('correct-horse-battery', 'client')).toBe('ok');
    expect(verifier.check('wrong', 'other')).toBe('unauthorized');
    now += 10_001;
    expect(verifier.check('wrong', 'client')).toBe('unauthorized');
  });

  it('Scenario: a missing token is refused but not counted as a guess', () => {
    const verifier = new TokenVerifier('correct-horse-battery', 2, 10_000, () => 0);
    for (let i = 0; i < 5; i++) expect(verifier.check(undefined, 'client')).toBe('unauthorized');
    expect(verifier.check('wrong', 'client')).toBe('unauthorized');
    expect(verifier.check('wrong', 'client')).toBe('unauthorized');
    expect(verifier.check('wrong', 'client')).toBe('throttled');
  });
});

describe('the console session cookie', () => {
  it('Scenario: the session cookie is derived from the token', () => {
    const verifier = new TokenVerifier('correct-horse-battery', 1, 10_000, () => 0);
    const value = verifier.sessionValue!;
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new TokenVerifier('correct-horse-battery').sessionValue).toBe(value);
    expect(new TokenVerifier('another-horse-battery').sessionValue).not.toBe(value);
    expect(new TokenVerifier(null).sessionValue).toBeNull();
    expect(verifier.authenticate(undefined, [value], 'c')).toBe('ok');
    // a stale bearer token beside a valid cookie does not spoil it; a wrong cookie is no credential and not counted
    expect(verifier.authenticate('stale-token', ['forged', value], 'c')).toBe('ok');
    for (let i = 0; i < 3; i++) expect(verifier.authenticate(undefined, ['forged'], 'c')).toBe('unauthorized');
    expect(verifier.authenticate('correct-horse-battery', ['forged'], 'c')).toBe('ok');
  });

  it('Scenario: the session cookie is read by name from the Cookie header', () => {
    const name = sessionCookieName(8000);
    expect(name).toBe('cashcode_session_8000');
    expect(cookieValues(undefined, name)).toEqual([]);
    expect(cookieValues('a=1; cashcode_session_8000=v1; cashcode_session_8001=x; cashcode_session_8000="v2"', name)).toEqual(['v1', 'v2']);
    expect(cookieValues(['cashcode_session_8000=', 'xcashcode_session_8000=y'], name)).toEqual([]);
  });
});

describe('clientKey', () => {
  const req = (remoteAddress: string, forwarded?: string) => ({
    socket: { remoteAddress },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  });

  it('Scenario: without trusted proxies X-Forwarded-For is ignored', () => {
    const none = new TrustedProxies([]);
    expect(clientKey(req('10.0.0.1', '1.2.3.4'), none)).toBe('10.0.0.1');
    expect(clientKey(req('::ffff:10.0.0.1'), none)).toBe('10.0.0.1');
  });

  it('Scenario: behind trusted proxies the right-most untrusted address is the client', () => {
    const trusted = new TrustedProxies(parseTrustedProxies('X', '10.0.0.0/8, 127.0.0.1'));
    expect(clientKey(req('127.0.0.1', '9.9.9.9, 203.0.113.7'), trusted)).toBe('203.0.113.7');
    expect(clientKey(req('::ffff:127.0.0.1', '203.0.113.7, 10.1.2.3'), trusted)).toBe('203.0.113.7');
    // a spoofed entry left of the proxy's own is never reached
    expect(clientKey(req('127.0.0.1', '10.9.9.9, 198.51.100.1'), trusted)).toBe('198.51.100.1');
    // an untrusted peer's header proves nothing
    expect(clientKey(req('198.51.100.2', '203.0.113.7'), trusted)).toBe('198.51.100.2');
    // only trusted hops: the left-most one is the client
    expect(clientKey(req('127.0.0.1', '10.0.0.9'), trusted)).toBe('10.0.0.9');
    expect(clientKey(req('127.0.0.1'), trusted)).toBe('127.0.0.1');
    expect(clientKey(req('127.0.0.1', 'not-an-ip'), trusted)).toBe('other:not-an-ip');
  });

  it('Scenario: IPv6 clients are keyed by their /64', () => {
    const none = new TrustedProxies([]);
    expect(clientKey(req('2001:db8:1:2:aaaa::1'), none)).toBe(clientKey(req('2001:db8:1:2:bbbb::2'), none));
    expect(clientKey(req('2001:db8:1:2::1'), none)).not.toBe(clientKey(req('2001:db8:1:3::1'), none));
  });
});

describe('parseTrustedProxies', () => {
  it('Scenario: addresses, ranges and names are accepted; anything else is a readable error', () => {
    expect(parseTrustedProxies('P', ' 10.0.0.1 , 192.168.0.0/16,fd00::/8, ::ffff:10.0.0.0/104')).toEqual([
      '10.0.0.1/32',
      '192.168.0.0/16',
      'fd00::/8',
      '10.0.0.0/8',
    ]);
    expect(parseTrustedProxies('P', 'loopback')).toEqual(['127.0.0.0/8', '::1/128']);
    expect(parseTrustedProxies('P', undefined)).toEqual([]);
    for (const bad of ['proxy.lan', '10.0.0.0/33', '127.1', '0x7f000001', '10.0.0.1/8/8', 'fe80::1%eth0', '::/129', '10.0.0.0/']) {
      expect(() => parseTrustedProxies('CASHCODE_TRUSTED_PROXIES', bad)).toThrow(
        new RegExp(`^CASHCODE_TRUSTED_PROXIES must list IP addresses or CIDR ranges .*got "${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"$`),
      );
    }
  });
});

describe('isOpenApiRequest', () => {
  it('Scenario: only exact GET/HEAD spellings of the open routes need no token', () => {
    for (const path of ['/api/health', '/api/health/', '/api/client-config', '/api/docs', '/api/docs/', '/api/docs-json', '/api/docs/swagger-ui.css']) {
      expect(isOpenApiRequest('GET', path)).toBe(true);
      expect(isOpenApiRequest('HEAD', path)).toBe(true);
    }
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) expect(isOpenApiRequest(method, '/api/health')).toBe(false);
    for (const path of ['/API/health', '/api//health', '/api/%68ealth', '/api/health//', '/api/health/x', '/api/docs/..', '/api/docs/a/b', '/api/docsx', '/api/settings/llm']) {
      expect(isOpenApiRequest('GET', path)).toBe(false);
    }
  });
});

describe('OAuth callback exemption', () => {
  it('exempts GET of the exact callback path only', () => {
    expect(isOpenApiRequest('GET', '/api/mcp/oauth/callback')).toBe(true);
    for (const method of ['HEAD', 'POST', 'PUT', 'DELETE']) expect(isOpenApiRequest(method, '/api/mcp/oauth/callback')).toBe(false);
    for (const path of ['/api/mcp/oauth/callback/x', '/api/mcp/oauth', '/api/mcp/OAuth/callback', '/api/mcp//oauth/callback', '/api/mcp/servers/x/oauth/start']) {
      expect(isOpenApiRequest('GET', path)).toBe(false);
    }
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
