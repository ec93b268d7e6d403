import fc from 'fast-check';
import { redactSecrets, registerSecretValue, unregisterSecretValue } from './redact';

describe('redactSecrets', () => {
  it('Scenario: bearer tokens are redacted', () => {
    expect(redactSecrets('Authorization header Bearer abc.def-123 sent')).toBe('Authorization header Bearer [redacted] sent');
    expect(redactSecrets('bearer xyz')).toBe('bearer [redacted]');
  });

  it('Scenario: secret key/value pairs are redacted, quoted or not', () => {
    expect(redactSecrets('api_key=abc123 other=1')).toBe('api_key=[redacted] other=1');
    expect(redactSecrets('api-key: abc123')).toBe('api-key: [redacted]');
    expect(redactSecrets('apikey=abc')).toBe('apikey=[redacted]');
    expect(redactSecrets('{"api_key":"sk-live-value","x":1}')).toBe('{"api_key":"[redacted]","x":1}');
    expect(redactSecrets("password='hunter2' ok")).toBe("password='[redacted]' ok");
    expect(redactSecrets('authorization: Bearer abc')).toBe('authorization: [redacted]');
    expect(redactSecrets('Cookie: session=abc')).toBe('Cookie: [redacted]');
    expect(redactSecrets('access_token=a&refresh_token=b')).toBe('access_token=[redacted]&refresh_token=[redacted]');
    expect(redactSecrets('client_secret=s3cr3t')).toBe('client_secret=[redacted]');
    expect(redactSecrets('x-api-key: abc')).toBe('x-api-key: [redacted]');
  });

  it('Scenario: sk- keys are redacted but short or embedded lookalikes are kept', () => {
    expect(redactSecrets('key sk-abcdefgh12 used')).toBe('key sk-[redacted] used');
    expect(redactSecrets('sk-proj_ABC-def_123456')).toBe('sk-[redacted]');
    expect(redactSecrets('sk-short')).toBe('sk-short');
    expect(redactSecrets('task-abcdefghijk')).toBe('task-abcdefghijk');
  });

  it('Scenario: OpenAI-compatible API keys are redacted from logs', () => {
    expect(redactSecrets('used cck_AbCdEf0123456789-_xyz here')).toBe('used cck_[redacted] here');
    expect(redactSecrets('cck_short')).toBe('cck_short');
    expect(redactSecrets('tick_abcdefghijkl')).toBe('tick_abcdefghijkl');
  });

  it('Scenario: harmless structured fields are left alone', () => {
    const line = 'event=llm.call.completed prompt_tokens=7 total_tokens=10 model="m1" turn_id=abc';
    expect(redactSecrets(line)).toBe(line);
  });

  it('Scenario: registered secret values are redacted wherever they appear', () => {
    registerSecretValue('my-very-own-token');
    try {
      expect(redactSecrets('url?token=my-very-own-token&x')).toBe('url?token=[redacted]&x');
      expect(redactSecrets('prefixmy-very-own-tokensuffix')).toBe('prefix[redacted]suffix');
    } finally {
      unregisterSecretValue('my-very-own-token');
    }
    expect(redactSecrets('my-very-own-token')).toBe('my-very-own-token');
  });

  it('Scenario: a registered secret containing another is replaced whole, whatever the registration order', () => {
    const short = 'abcdef';
    const long = 'abcdefghij-long';
    for (const order of [[short, long], [long, short]]) {
      order.forEach((value) => registerSecretValue(value));
      registerSecretValue(long); // registering twice changes nothing
      try {
        expect(redactSecrets('x abcdefghij-long y abcdef z')).toBe('x [redacted] y [redacted] z');
        unregisterSecretValue(long);
        expect(redactSecrets('x abcdefghij-long y')).toBe('x [redacted]ghij-long y');
      } finally {
        order.forEach((value) => unregisterSecretValue(value));
      }
      expect(redactSecrets('x abcdefghij-long y abcdef z')).toBe('x abcdefghij-long y abcdef z');
    }
  });

  it('Scenario: redaction matches the plain definition on lines built from secret-looking parts (property)', () => {
    // The redaction rules of openspec http-platform without shortcuts: every rule applied to every line (a key may end
    // in a quote that did not open it: the opening quote can be the end of the previous pair's quoted value).
    const reference = (text: string): string =>
      text
        .replace(/\b(Bearer)\s+[^\s"',;]+/gi, '$1 [redacted]')
        .replace(
          // eslint-disable-next-line regexp/no-super-linear-move -- the plain definition, run on strings of ≤ 12 parts
          /((["']?)[\w-]*(?:api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password)[\w-]*["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|(?:(?:Bearer|Basic|Token)\s+)?(?:\[redacted\]|[^\s"',;&}\]]+))/gi,
          (_match, prefix: string, _quote: string, value: string) => {
            if (value === '[redacted]' || value === '"[redacted]"' || value === "'[redacted]'") return `${prefix}${value}`;
            if (value.startsWith('"')) return `${prefix}"[redacted]"`;
            if (value.startsWith("'")) return `${prefix}'[redacted]'`;
            return `${prefix}[redacted]`;
          },
        )
        .replace(/(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{8,}/g, 'sk-[redacted]');
    const part = fc.constantFrom(
      'API_KEY', 'Api-Key', 'apikey', 'x-api-key', 'AUTHORIZATION', 'Cookie', 'access_token', 'Refresh-Token', 'client_secret',
      'PassWord', 'tokens', 'key', 'Bearer', 'Basic', 'sk-', 'abcdefgh12', '=', ':', ' ', '"', "'", ',', ';', '&', '}', ']',
      '[redacted]', 'event=x.y', 'value', '\n',
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(redactSecrets(text)).toBe(reference(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('Scenario: redaction matches the plain definition on lines built from secret-looking parts (property, quotes, escapes and Unicode blanks)', () => {
    // The same rules as whole-text global patterns, each tried at every position: the pre-scanned pair pass and the
    // scanned bearer tokens must find exactly the same matches.
    const reference = (text: string): string =>
      text
        .replace(/\b(Bearer)\s+[^\s"',;]+/gi, '$1 [redacted]')
        .replace(
          /((["']?)(?<![\w-])(?=[\w-]*?(?:api[_-]?key|authorization|cookie|access[_-]?token|refresh[_-]?token|secret|password))[\w-]+["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|(?:(?:Bearer|Basic|Token)\s+)?(?:\[redacted\]|[^\s"',;&}\]]+))/gi,
          (_match, prefix: string, _quote: string, value: string) =>
            value.startsWith('"') ? `${prefix}"[redacted]"` : value.startsWith("'") ? `${prefix}'[redacted]'` : `${prefix}[redacted]`,
        )
        .replace(/(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{8,}/g, 'sk-[redacted]');
    const part = fc.constantFrom(
      'api_key', 'x-Api-Key', 'SECRET', 'secretsecret', 'cookie', 'password', 'key', 'bearer', 'Bearer', 'Token', 'Basic',
      'sk-', 'abcdefgh12', '=', ':', ' ', '\u00a0', '\u2028', '\u3000', '\t', '\n', '\r', '"', "'", '\\', '\\"', ',', ';',
      '&', '}', ']', '[', '[redacted]', '[REDACTED]', 'ü', '😀', '-', '_', 'x',
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 24 }), (parts) => {
        const text = parts.join('');
        expect(redactSecrets(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('Scenario: redaction is idempotent and never leaks an sk- key (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.stringMatching(/^[A-Za-z0-9_-]{8,30}$/), fc.string(), (before, key, after) => {
        const text = `${before} sk-${key} ${after}`;
        const once = redactSecrets(text);
        expect(once).not.toContain(`sk-${key}`);
        expect(redactSecrets(once)).toBe(once);
      }),
    );
  });
});
