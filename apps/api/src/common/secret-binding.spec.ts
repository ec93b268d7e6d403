import fc from 'fast-check';
import { commandSecretBinding, sameSecretOrigin, secretMayFollow, urlSecretBinding } from './secret-binding';

/** An origin of the model below: what the binding must treat as one place. */
interface Origin {
  scheme: 'http' | 'https';
  /** canonical host: lowercase name, dotted IPv4 or compressed IPv6 in brackets */
  host: string;
  /** the port actually used */
  port: number;
}

const HOSTS = ['127.0.0.1', '10.0.0.7', 'localhost', 'api.example.com', '[::1]', '[2001:db8::5]'];
const PORTS = [80, 443, 8080, 11434];
const DEFAULT_PORT = { http: 80, https: 443 } as const;

function canonical(origin: Origin): string {
  return `${origin.scheme}://${origin.host}:${origin.port}`;
}

/** Other spellings of the same host that URL parsing (and so the HTTP client) maps to it. */
function hostSpellings(host: string): string[] {
  switch (host) {
    case '127.0.0.1':
      return ['127.0.0.1', '127.0.0.1.', '127.1', '0x7f.0.0.1', '2130706433', '0177.0.0.1'];
    case '10.0.0.7':
      return ['10.0.0.7', '10.0.0.7.', '10.7', '0xa.0.0.7'];
    case '[::1]':
      return ['[::1]', '[0:0:0:0:0:0:0:1]', '[0::1]', '[::0001]'];
    case '[2001:db8::5]':
      return ['[2001:db8::5]', '[2001:DB8:0:0:0:0:0:5]', '[2001:0db8::0005]'];
    default:
      return [host, `${host}.`, host.toUpperCase(), `${host.toUpperCase()}.`];
  }
}

const originArb: fc.Arbitrary<Origin> = fc.record({
  scheme: fc.constantFrom('http' as const, 'https' as const),
  host: fc.constantFrom(...HOSTS),
  port: fc.constantFrom(...PORTS),
});

/** A hostile but equivalent spelling of an origin: scheme case, host form, explicit default port, userinfo, path. */
function spellingArb(origin: Origin): fc.Arbitrary<string> {
  return fc
    .record({
      schemeUpper: fc.boolean(),
      host: fc.constantFrom(...hostSpellings(origin.host)),
      explicitDefaultPort: fc.boolean(),
      leadingZeros: fc.boolean(),
      userinfo: fc.constantFrom('', 'a@', 'user:pw@', `${origin.host.replace(/[[\]]/g, '')}@`),
      path: fc.constantFrom('', '/', '/v1', '/v1/', '/a/../b', '?q=1', '#frag'),
    })
    .map((s) => {
      const scheme = s.schemeUpper ? origin.scheme.toUpperCase() : origin.scheme;
      const isDefault = origin.port === DEFAULT_PORT[origin.scheme];
      const portText = s.leadingZeros ? `00${origin.port}` : String(origin.port);
      const port = isDefault && !s.explicitDefaultPort ? '' : `:${portText}`;
      return `${scheme}://${s.userinfo}${s.host}${port}${s.path}`;
    });
}

describe('secret binding (origin of a URL)', () => {
  it('Scenario: hostile spellings of the same origin bind alike; different origins never do (property)', () => {
    fc.assert(
      fc.property(
        originArb.chain((a) => fc.tuple(fc.constant(a), spellingArb(a))),
        originArb.chain((b) => fc.tuple(fc.constant(b), spellingArb(b))),
        ([a, spellA], [b, spellB]) => {
          const bindingA = urlSecretBinding(spellA);
          const bindingB = urlSecretBinding(spellB);
          expect(bindingA).not.toBeNull();
          expect(bindingB).not.toBeNull();
          expect(secretMayFollow(bindingA, bindingB)).toBe(canonical(a) === canonical(b));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('Scenario: the binding decision on hand-picked hostile spellings', () => {
    const same: Array<[string, string]> = [
      ['HTTP://127.0.0.1:80/', 'http://127.0.0.1/'],
      ['http://127.0.0.1.:8080', 'http://127.0.0.1:8080/v1'],
      ['http://a@127.0.0.1', 'http://127.0.0.1'],
      ['http://[::1]', 'http://[0:0:0:0:0:0:0:1]:80/x'],
      ['https://API.Example.COM.:443/v1', 'https://api.example.com'],
      ['http://localhost.:11434', 'http://LOCALHOST:11434/v1'],
      ['http://127.0.0.1:8080#@evil.example', 'http://127.0.0.1:8080'],
      ['http://%6c%6fcalhost:1', 'http://localhost:1'],
    ];
    const different: Array<[string, string]> = [
      ['http://127.0.0.1:8080', 'http://localhost:8080'],
      ['http://127.0.0.1:8080', 'http://127.0.0.1:8081'],
      ['http://127.0.0.1', 'https://127.0.0.1'],
      ['https://127.0.0.1', 'http://127.0.0.1:443'],
      ['http://127.0.0.1', 'http://127.0.0.1@evil.example'],
      ['http://127.0.0.1', 'http://evil.example\\@127.0.0.1'],
      ['http://127.0.0.1:80', 'http://127.0.0.1:80@evil.example/'],
      ['http://127.0.0.1', 'http://[::ffff:127.0.0.1]'],
      ['http://[::1]', 'http://127.0.0.1'],
      ['https://api.example.com', 'https://api.example.com.evil.example'],
      ['https://example.com', 'https://example.com..'],
    ];
    for (const [a, b] of same) expect([a, b, sameSecretOrigin(a, b)]).toEqual([a, b, true]);
    for (const [a, b] of different) expect([a, b, sameSecretOrigin(a, b)]).toEqual([a, b, false]);
  });

  it('Scenario: what is not an http(s) URL with a host binds to nothing, and nothing matches nothing', () => {
    for (const raw of ['', 'not a url', 'ftp://127.0.0.1', 'file:///etc/passwd', 'http://', 'javascript:alert(1)']) {
      expect([raw, urlSecretBinding(raw)]).toEqual([raw, null]);
    }
    expect(secretMayFollow(null, null)).toBe(false);
    expect(secretMayFollow('http://a', null)).toBe(false);
    expect(urlSecretBinding(' HTTP://[::1]:08080/v1 ')).toBe('http://[::1]:8080');
  });

  it('binds stdio env secrets to the exact command and arguments', () => {
    const bound = commandSecretBinding('node', ['server.js']);
    expect(secretMayFollow(bound, commandSecretBinding(' node ', ['server.js']))).toBe(true);
    expect(secretMayFollow(bound, commandSecretBinding('node', ['server.js', '--x']))).toBe(false);
    expect(secretMayFollow(bound, commandSecretBinding('python3', ['server.js']))).toBe(false);
    // argument boundaries count: ["a b"] is not ["a", "b"]
    expect(secretMayFollow(commandSecretBinding('x', ['a b']), commandSecretBinding('x', ['a', 'b']))).toBe(false);
    expect(commandSecretBinding('  ', [])).toBeNull();
  });
});
