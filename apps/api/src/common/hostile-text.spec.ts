/**
 * Text the server does not control, fed to every text pass that meets it: the redactor, the tool-argument preview,
 * the text tidy of web_fetch, the SKILL.md parser and the MCP validators. Correctness properties over arbitrary and
 * adversarial strings, plus 1 MiB of each adversarial family. The bounds on the 1 MiB runs are far above the linear
 * cost (tens of milliseconds) and far below the super-linear one (the old redaction pattern took 10 s on 4,000
 * characters, so hours on 1 MiB); the linearity itself is asserted structurally by `npm run lint`
 * (regexp/no-super-linear-backtracking, regexp/no-super-linear-move) and measured by `npm run bench`.
 */
import { parseSkillMarkdown } from '@cashcode/skill-format';
import fc from 'fast-check';
import { argumentPreview, ARGUMENT_PREVIEW_MAX_CHARS } from '../agent/argument-preview';
import { tidyText } from '../agent/tools/html-to-markdown';
import { McpError } from '../mcp/mcp.errors';
import { validateHeaders, validateUrl } from '../mcp/mcp-validation';
import { redactSecrets, registerSecretValue, unregisterSecretValue } from './redact';
import { firstCodePoints, trimTrailing } from './trim';

const MiB = 1024 * 1024;
/** generous: ~50x the linear cost on a loaded 2-core machine, ~0 % of the super-linear one */
const BOUND_MS = 2000;

function fill(unit: string, size = MiB): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

function elapsed<T>(run: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
}

/** The adversarial structures of the brief, as parts that fast-check strings together. */
const HOSTILE_PARTS = [
  'secret', 'secretsecret', 'api_key', 'x-api-key', 'key=', 'api_key=', 'password:', '"password":', "'secret'=",
  'token', 'access_token=', 'Bearer ', 'bearer', 'Basic ', 'Token ', 'sk-', 'sk-abcdefgh12', 'Authorization: ',
  'Cookie:', '=', ':', ' ', '    ', '\t', '\n', '\n\n\n', '\r\n', '"', "'", '\\', '\\"', '[', ']', '[[', ']]', '{',
  '}', '(', ')', ',', ';', '&', '[redacted]', '<div>', '</', '<!--', '&nbsp;', '---', 'value', 'ünï', '😀',
];
const hostileText = fc.array(fc.oneof(fc.constantFrom(...HOSTILE_PARTS), fc.string({ maxLength: 6 })), { maxLength: 40 }).map((parts) => parts.join(''));

/** Families of 1 MiB: each the repetition that made some pass of the old code super-linear. */
const FAMILIES: Record<string, string> = {
  'secret×N': fill('secret'),
  'api_key=×N': fill('api_key='),
  'key-name run with a secret name': fill('x-api-key-secret-password'),
  'Bearer ×N': fill('Bearer '),
  'password="\\ unclosed quotes': fill('password="\\'),
  '"secret":" quoted keys': fill('"secret":"'),
  "'secret'=' single quotes": fill("'secret'='"),
  'password: then 1 MiB of spaces': `password:${fill(' ')}`,
  'spaces then x': `${fill(' ')}x`,
  'tabs and spaces then x': `${fill(' \t')}x`,
  'newlines then x': `${fill('\n')}x`,
  '\\r\\n runs': fill('\r\n'),
  'nested brackets': `${fill('[', MiB / 2)}${fill(']', MiB / 2)}`,
  'unclosed brackets': fill('[{('),
  'sk- runs': fill('sk-'),
  'slashes': `${fill('/')}x`,
};

describe('hostile text: redaction', () => {
  it('Scenario: a known secret value never survives redaction, whatever surrounds it', () => {
    // Q-delimited and free of lower-case letters and brackets, so no marker the redactor writes can contain it.
    const secret = fc
      .stringMatching(/^[A-Z0-9=:"' \\\-_{}&;,.]{4,24}$/)
      .map((core) => `Q${core}Q`);
    fc.assert(
      fc.property(hostileText, secret, hostileText, fc.nat({ max: 3 }), (before, value, after, repeats) => {
        registerSecretValue(value);
        try {
          const text = `${before}${value}${after}${value.repeat(repeats)}`;
          expect(redactSecrets(text)).not.toContain(value);
        } finally {
          unregisterSecretValue(value);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('Scenario: a known secret value never survives redaction, whatever surrounds it (key-named pairs, by name)', () => {
    fc.assert(
      fc.property(
        hostileText,
        fc.constantFrom('api_key', 'X-Api-Key', 'client_secret', 'PASSWORD', 'access-token', 'refresh_token', 'cookie'),
        fc.constantFrom('=', ': ', ' = ', ':'),
        fc.stringMatching(/^Q[A-Za-z0-9._~+/-]{5,30}$/),
        fc.constantFrom('', ' ', ',', '&', '\n', '}'),
        hostileText,
        (before, key, separator, value, end, after) => {
          // The pair follows a `;`, which no key or bare value contains. (After whitespace alone, `Cookie: api_key = v`
          // reads as the pair `Cookie: api_key` followed by ` = v`: the key-name rule redacts the first value only.)
          const text = `${before};${key}${separator}${value}${end}${after}`;
          expect(redactSecrets(text)).not.toContain(value);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('Scenario: redaction is idempotent and its output is bounded', () => {
    registerSecretValue('Q-registered-secret-Q');
    try {
      fc.assert(
        fc.property(fc.oneof(hostileText, fc.string({ maxLength: 200 })), (text) => {
          const once = redactSecrets(text);
          expect(redactSecrets(once)).toBe(once);
          expect(once.length).toBeLessThanOrEqual(10 * text.length + 12);
        }),
        { numRuns: 3000 },
      );
    } finally {
      unregisterSecretValue('Q-registered-secret-Q');
    }
  });

  it('Scenario: 1 MiB of repeated key names, bearer prefixes, quotes or whitespace is redacted without backtracking', () => {
    registerSecretValue('secretsecret-registered');
    try {
      for (const [family, text] of Object.entries(FAMILIES)) {
        const { value, ms } = elapsed(() => redactSecrets(text));
        expect({ family, withinBound: ms < BOUND_MS }).toEqual({ family, withinBound: true });
        expect(redactSecrets(value)).toBe(value);
      }
    } finally {
      unregisterSecretValue('secretsecret-registered');
    }
    // what the rules say on the families whose result is easy to state
    expect(redactSecrets(FAMILIES['secret×N']!)).toBe(FAMILIES['secret×N']);
    expect(redactSecrets(FAMILIES['api_key=×N']!)).toBe('api_key=[redacted]');
    expect(redactSecrets(FAMILIES['Bearer ×N']!)).not.toMatch(/Bearer (?!\[redacted\])\S/);
    expect(redactSecrets(`${fill(' ')}password=hunter22`)).toBe(`${fill(' ')}password=[redacted]`);
  });
});

describe('hostile text: argument preview', () => {
  it('Scenario: argument previews stay redacted and bounded on hostile arguments', () => {
    registerSecretValue('Q-model-key-1234567-Q');
    try {
      fc.assert(
        fc.property(hostileText, fc.string({ maxLength: 300 }), fc.nat({ max: 4000 }), (before, tail, padding) => {
          const raw = JSON.stringify({ before, api_key: 'QsecretvalueQ', note: 'Q-model-key-1234567-Q', tail }) + ' '.repeat(padding);
          const preview = argumentPreview(raw);
          expect(Array.from(preview).length).toBeLessThanOrEqual(ARGUMENT_PREVIEW_MAX_CHARS);
          expect(preview).not.toContain('QsecretvalueQ');
          expect(preview).not.toContain('Q-model-key-1234567-Q');
        }),
        { numRuns: 1000 },
      );
      for (const [family, text] of Object.entries(FAMILIES)) {
        const { value, ms } = elapsed(() => argumentPreview(`{"password": "Q-model-key-1234567-Q", "x": ${JSON.stringify(text)}}`));
        expect({ family, withinBound: ms < BOUND_MS }).toEqual({ family, withinBound: true });
        expect(Array.from(value).length).toBeLessThanOrEqual(ARGUMENT_PREVIEW_MAX_CHARS);
        expect(value).not.toContain('Q-model-key-1234567-Q');
      }
    } finally {
      unregisterSecretValue('Q-model-key-1234567-Q');
    }
  });

  it('Scenario: argument previews stay redacted and bounded on hostile arguments (code points, not UTF-16 units)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 700 }), fc.nat({ max: 600 }), (text, max) => {
        const chars = Array.from(text);
        const head = firstCodePoints(text, max);
        expect(head.text).toBe(chars.slice(0, max).join(''));
        expect(head.cut).toBe(chars.length > max);
      }),
    );
  });
});

describe('hostile text: text tidy', () => {
  it('Scenario: the text tidy is linear on long blank runs', () => {
    const blanky = fc.array(fc.constantFrom(' ', '\t', '\n', '\r\n', '\r', 'a', '  \n', '\n\n\n', '\u00a0'), { maxLength: 60 }).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.oneof(blanky, hostileText), (text) => {
        const tidy = tidyText(text);
        expect(tidy).not.toMatch(/[ \t]\n/);
        expect(tidy).not.toContain('\n\n\n');
        expect(tidy).not.toContain('\r');
        expect(tidyText(tidy)).toBe(tidy);
        expect(tidy.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 3000 },
    );
    for (const [family, text] of Object.entries(FAMILIES)) {
      const { value, ms } = elapsed(() => tidyText(text));
      expect({ family, withinBound: ms < BOUND_MS }).toEqual({ family, withinBound: true });
      expect(value).not.toContain('\n\n\n');
    }
    expect(tidyText(`a${fill(' ')}b \n`)).toBe(`a${fill(' ')}b`);
  });

  it('Scenario: the text tidy is linear on long blank runs (same output as the plain definition)', () => {
    // CR and CRLF as newlines, blanks trimmed at line ends, 3+ newlines collapsed: each rule as a whole-text pattern
    const reference = (text: string): string =>
      text.replace(/\r\n?/g, '\n').replace(/(?<![ \t])[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
    const lineEnds = fc.array(fc.constantFrom(' ', '\t', '\n', '\r\n', '\r', '\r\r', '\n\r', 'a', ' \r\n', '\u00a0', '\u2028'), { maxLength: 40 });
    fc.assert(
      fc.property(fc.oneof(lineEnds.map((p) => p.join('')), hostileText), (text) => {
        expect(tidyText(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('Scenario: the text tidy is linear on long blank runs (trailing runs are trimmed by a loop)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50 }), fc.constantFrom('/', '\n', 'a'), (text, char) => {
        let expected = text;
        while (expected.endsWith(char)) expected = expected.slice(0, -1);
        expect(trimTrailing(text, char)).toBe(expected);
      }),
    );
    const { value, ms } = elapsed(() => trimTrailing(`${fill('/')}x${fill('/')}`, '/'));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(value).toBe(`${fill('/')}x`);
  });
});

describe('hostile text: SKILL.md and MCP validators', () => {
  const skillText = fc
    .array(
      fc.constantFrom('---', '---  ', '\n', '\r\n', 'name: x', 'description: d', ': ', '[', ']', '{', '}', '"', "'", ' ', '\t', '- ', '&a', '*a', '!!str', '#', 'body'),
      { maxLength: 80 },
    )
    .map((parts) => parts.join(''));

  it('Scenario: SKILL.md and MCP validators reject hostile input without throwing or stalling', () => {
    fc.assert(
      fc.property(fc.oneof(skillText, hostileText, fc.string()), (text) => {
        const result = parseSkillMarkdown(text);
        if (!result.ok) expect(typeof result.error).toBe('string');
      }),
      { numRuns: 3000 },
    );
    const hostileSkills: Record<string, string> = {
      'deep brackets': `---\nname: deep\ndescription: ${'['.repeat(39_000)}\n---\nbody\n`,
      'deep mappings': `---\nname: deep\ndescription: ${'{a: '.repeat(19_000)}\n---\nbody\n`,
      'delimiter runs': `---${' '.repeat(70_000)}\n---\n`,
      'newline runs': `---\n${'\n'.repeat(70_000)}name: a\ndescription: b\n---\nbody`,
      'unclosed frontmatter': `---\nname: a\ndescription: b\n${'--- x\n'.repeat(12_000)}`,
      'alias bomb': `---\nname: a\ndescription: b\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\nbody`,
      'over the size cap': `---\nname: a\ndescription: ${fill('secret')}\n---\nbody`,
    };
    for (const [family, text] of Object.entries(hostileSkills)) {
      const { value, ms } = elapsed(() => parseSkillMarkdown(text));
      expect({ family, withinBound: ms < BOUND_MS, error: value.ok ? 'ok' : typeof value.error }).toEqual({
        family,
        withinBound: true,
        error: value.ok ? 'ok' : 'string',
      });
    }
  });

  it('Scenario: SKILL.md and MCP validators reject hostile input without throwing or stalling (MCP url and headers)', () => {
    const validationOnly = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(McpError);
      }
    };
    const urlish = fc
      .array(fc.constantFrom('http://', 'https://', 'a', '@', '/', '?', '#', ':', '[', ']', '%', ' ', '\n', 'user:pass@', '::1', '.'), { maxLength: 30 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(urlish, hostileText), (url) => validationOnly(() => validateUrl(url))),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(hostileText, fc.string()), fc.oneof(hostileText, fc.string())), (headers) =>
        validationOnly(() => validateHeaders(headers, null)),
      ),
      { numRuns: 1000 },
    );
    for (const [family, text] of Object.entries(FAMILIES)) {
      const { ms } = elapsed(() => {
        validationOnly(() => validateUrl(`https://${text}`));
        validationOnly(() => validateUrl(`https://example.com/${text}`));
        validationOnly(() => validateHeaders({ [text.slice(0, 200)]: text }, null));
      });
      expect({ family, withinBound: ms < BOUND_MS }).toEqual({ family, withinBound: true });
    }
  });
});
