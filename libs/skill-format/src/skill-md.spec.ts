import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitAllowedTools } from './manifest-fields';
import { parseSkillMarkdown } from './skill-md';
import { FRONTMATTER_MAX_BLANK_LINES, FRONTMATTER_MAX_FLOW_DEPTH, SKILL_MD_MESSAGES as M } from './skill-md-rules';
import { utf8ByteLength } from './text-length';
import { PATH_MESSAGES, checkSupportPath } from './package-paths';

const md = (frontmatter: string, body = 'Do the thing.') => `---\n${frontmatter}\n---\n${body}\n`;
const base = 'name: demo\ndescription: A demo skill';

function errorOf(content: string, expectedName?: string): string {
  const result = parseSkillMarkdown(content, expectedName === undefined ? {} : { expectedName });
  if (result.ok) throw new Error('expected a validation error');
  return result.error;
}

describe('parseSkillMarkdown', () => {
  it('Scenario: a minimal SKILL.md validates with defaults', () => {
    const result = parseSkillMarkdown(md(base), { expectedName: 'demo' });
    expect(result).toEqual({
      ok: true,
      body: 'Do the thing.',
      manifest: {
        name: 'demo',
        description: 'A demo skill',
        version: 1,
        version_label: null,
        always: false,
        display_name: null,
        tags: [],
        triggers: [],
        requires: { tools: [], mcp_servers: [], bins: [], env: [] },
        optional: { tools: [], mcp_servers: [], bins: [], env: [] },
        license: null,
        compatibility: null,
        metadata: {},
        allowed_tools: null,
      },
    });
  });

  it('Scenario: the SKILL.md rules apply in order with their messages', () => {
    expect(errorOf('   \n')).toBe(M.empty);
    expect(errorOf(md(base, 'x'.repeat(80_001)))).toBe(M.tooLarge);
    expect(errorOf('name: demo\n')).toBe(M.noFrontmatter);
    expect(errorOf('---\nname: demo\n--\nbody')).toBe(M.noFrontmatter);
    expect(errorOf(md('name: [unclosed'))).toMatch(/^invalid YAML frontmatter: /);
    expect(errorOf(md('- a\n- b'))).toBe(M.notMapping);
    expect(errorOf(md('just a string'))).toBe(M.notMapping);
    expect(errorOf(md('name: demo'))).toBe(M.nameDescriptionStrings);
    expect(errorOf(md('name: 12\ndescription: x'))).toBe(M.nameDescriptionStrings);
    expect(errorOf(md('name: Demo\ndescription: x'))).toBe(M.invalidName);
    expect(errorOf(md('name: -demo\ndescription: x'))).toBe(M.invalidName);
    expect(errorOf(md(`name: ${'a'.repeat(65)}\ndescription: x`))).toBe(M.invalidName);
    expect(errorOf(md(base), 'other')).toBe(M.nameMismatch);
    expect(errorOf(md('name: demo\ndescription: "   "'))).toBe(M.emptyDescription);
    expect(errorOf(md(base, '   '))).toBe(M.emptyBody);
    expect(errorOf(md(`${base}\nversion: yes`))).toBe(M.version);
    expect(errorOf(md(`${base}\nversion: ""`))).toBe(M.version);
    expect(errorOf(md(`${base}\nversion: [1, 2]`))).toBe(M.version);
    expect(errorOf(md(`${base}\nversion: {major: 1}`))).toBe(M.version);
    expect(errorOf(md(`${base}\nalways: "true"`))).toBe(M.always);
    expect(errorOf(md(`${base}\ndisplay_name: 3`))).toBe(M.displayNameString);
    expect(errorOf(md(`${base}\ndisplay_name: "  "`))).toBe(M.displayNameEmpty);
    expect(errorOf(md(`${base}\ndisplay_name: ${'x'.repeat(81)}`))).toBe(M.displayNameLength);
    expect(errorOf(md(`${base}\ndisplay_name: "a\\u200bb"`))).toBe(M.displayNameControl);
    expect(errorOf(md(`${base}\ntags: web`))).toBe(M.stringList('tags'));
    expect(errorOf(md(`${base}\ntriggers: ["ok", ""]`))).toBe(M.stringList('triggers'));
    expect(errorOf(md(`${base}\nrequires: [exec]`))).toBe(M.mapping('requires'));
    expect(errorOf(md(`${base}\nrequires:\n  bins: gh`))).toBe(M.stringList('requires.bins'));
    expect(errorOf(md(`${base}\noptional:\n  tools: [1]`))).toBe(M.stringList('optional.tools'));
  });

  it('Scenario: YAML 1.1 semantics — yes/on are booleans and unquoted dates are dates', () => {
    const on = parseSkillMarkdown(md(`${base}\nalways: on`));
    expect(on.ok && on.manifest.always).toBe(true);
    expect(errorOf(md('name: 2024-01-01\ndescription: x'))).toBe(M.nameDescriptionStrings);
    expect(errorOf(md(`${base}\nextra: !!python/object:os.system {}`))).toMatch(/^invalid YAML frontmatter: /);
  });

  it('Scenario: values are trimmed and CRLF files are accepted', () => {
    const result = parseSkillMarkdown('---\r\nname: " demo "\r\ndescription: "  x  "\r\ndisplay_name: " 认知扭曲 "\r\n---\r\n\r\n Body \r\n');
    expect(result.ok && [result.manifest.name, result.manifest.description, result.manifest.display_name, result.body]).toEqual([
      'demo',
      'x',
      '认知扭曲',
      'Body',
    ]);
  });

  it('Scenario: Agent Skills fields (license, compatibility, metadata, allowed-tools) are accepted', () => {
    const result = parseSkillMarkdown(
      md(
        `${base}\nlicense: Apache-2.0\ncompatibility: Requires git and network access\nmetadata:\n  author: example-org\n  version: 1.0\nallowed-tools: Bash(git add:*) Read, Grep`,
      ),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.manifest.license).toBe('Apache-2.0');
    expect(result.manifest.compatibility).toBe('Requires git and network access');
    expect(result.manifest.metadata).toEqual({ author: 'example-org', version: '1' });
    expect(result.manifest.allowed_tools).toEqual(['Bash(git add:*)', 'Read', 'Grep']);
    const list = parseSkillMarkdown(md(`${base}\nallowed-tools: [read_file, exec]`));
    expect(list.ok && list.manifest.allowed_tools).toEqual(['read_file', 'exec']);
    expect(errorOf(md(`${base}\nlicense: ""`))).toBe(M.license);
    expect(errorOf(md(`${base}\ncompatibility: ${'c'.repeat(501)}`))).toBe(M.compatibility);
    expect(errorOf(md(`${base}\nmetadata: just text`))).toBe(M.metadata);
    expect(errorOf(md(`${base}\nallowed-tools: {a: 1}`))).toBe(M.allowedTools);
  });

  it('Scenario: any version text is accepted and kept as written', () => {
    const label = (value: string) => {
      const result = parseSkillMarkdown(md(`${base}\nversion: ${value}`));
      return result.ok ? [result.manifest.version, result.manifest.version_label] : result.error;
    };
    expect(label('3')).toEqual([3, '3']);
    expect(label('1.0.2')).toEqual([1, '1.0.2']);
    expect(label('"2"')).toEqual([1, '2']);
    expect(label('1.5')).toEqual([1, '1.5']);
    expect(label('0')).toEqual([1, '0']);
    expect(label('v2-beta')).toEqual([1, 'v2-beta']);
  });

  it('Scenario: metadata lists, numbers and mappings are kept as text', () => {
    const result = parseSkillMarkdown(
      md(`${base}\nmetadata:\n  tags: [docs, office]\n  version: 2\n  ratio: 0.5\n  nested: {a: 1, b: [x]}\n  date: 2024-06-01\n  empty:`),
    );
    expect(result.ok && result.manifest.metadata).toEqual({
      tags: '["docs","office"]',
      version: '2',
      ratio: '0.5',
      nested: '{"a":1,"b":["x"]}',
      date: '2024-06-01',
      empty: '',
    });
    expect(errorOf(md(`${base}\nmetadata: [a, b]`))).toBe(M.metadata);
    expect(errorOf(md(`${base}\nmetadata:\n  blob: !!binary aGVsbG8=`))).toBe(M.metadata);
  });

  it('Scenario: splitAllowedTools keeps parenthesised patterns together', () => {
    expect(splitAllowedTools('Bash(git status:*), Read  Write')).toEqual(['Bash(git status:*)', 'Read', 'Write']);
  });

  it('Scenario: the parser never throws and only accepts names matching the pattern (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, body) => {
        const result = parseSkillMarkdown(`---\nname: ${JSON.stringify(name)}\ndescription: d\n---\n${body}`);
        if (result.ok) {
          expect(result.manifest.name).toMatch(/^[a-z0-9][a-z0-9._-]{0,63}$/);
          expect(result.body).not.toBe('');
        }
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        expect(() => parseSkillMarkdown(text)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('Scenario: frontmatter that would make the YAML parse super-linear is refused before it is parsed', () => {
    const deep = (n: number) => `${'['.repeat(n)}x${']'.repeat(n)}`;
    expect(parseSkillMarkdown(md(`${base}\nextra: ${deep(FRONTMATTER_MAX_FLOW_DEPTH)}`)).ok).toBe(true);
    expect(errorOf(md(`${base}\ntags: ${deep(FRONTMATTER_MAX_FLOW_DEPTH + 1)}`))).toBe(M.frontmatterTooDeep);
    expect(errorOf(md(`${base}\nmetadata: ${'{a: '.repeat(FRONTMATTER_MAX_FLOW_DEPTH + 1)}`))).toBe(M.frontmatterTooDeep);
    // brackets inside quoted scalars and comments are text; a quote inside plain text opens nothing
    const quoted = md(`name: demo\ndescription: "a ${'['.repeat(40)} b" # ${'{'.repeat(40)}\ncompatibility: '${'['.repeat(40)}'`);
    expect(parseSkillMarkdown(quoted)).toMatchObject({ ok: true, manifest: { description: `a ${'['.repeat(40)} b` } });
    expect(errorOf(md(`${base}\ntags: [ x '${'['.repeat(40)}`))).toBe(M.frontmatterTooDeep);
    const blanks = (n: number) => md(`name: demo\n${'\n'.repeat(n)}description: d`);
    expect(parseSkillMarkdown(blanks(FRONTMATTER_MAX_BLANK_LINES)).ok).toBe(true);
    expect(errorOf(blanks(FRONTMATTER_MAX_BLANK_LINES + 1))).toBe(M.frontmatterBlankLines);
    expect(errorOf(md(`name: demo\ndescription: "d${' \r\n'.repeat(FRONTMATTER_MAX_BLANK_LINES + 2)}"`))).toBe(M.frontmatterBlankLines);
    expect(errorOf(md(`${base}\nlicense: ${'x'.repeat(20_000)}`))).toBe(M.frontmatterTooLarge);
    expect(M.frontmatterTooLarge).toBe('frontmatter must be at most 16384 bytes');
  });

  it('Scenario: frontmatter that would make the YAML parse super-linear is refused before it is parsed (the built-in Skills still parse)', () => {
    const builtin = join(__dirname, '..', '..', '..', 'apps', 'api', 'src', 'skills', 'builtin');
    const names = readdirSync(builtin, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const result = parseSkillMarkdown(readFileSync(join(builtin, name, 'SKILL.md'), 'utf8'), { expectedName: name });
      expect({ name, ok: result.ok }).toEqual({ name, ok: true });
    }
  });

  it('Scenario: utf8ByteLength counts like Buffer.byteLength', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(utf8ByteLength(text)).toBe(Buffer.byteLength(text, 'utf8'));
      }),
    );
  });
});

describe('checkSupportPath', () => {
  it('Scenario: package-relative paths are accepted, including root files and other folders', () => {
    expect(checkSupportPath('references/a.md')).toEqual({ ok: true, path: 'references/a.md', segments: ['references', 'a.md'] });
    expect(checkSupportPath('LICENSE.txt').ok).toBe(true);
    expect(checkSupportPath('examples/deep/x.json').ok).toBe(true);
  });

  it('Scenario: unsafe or reserved paths are rejected with their messages', () => {
    const error = (p: string) => {
      const result = checkSupportPath(p);
      return result.ok ? null : result.error;
    };
    for (const bad of ['../SKILL.md', '/etc/passwd', 'C:/x', 'a\\b', 'a//b', './a', 'a/', '', 'a\0b']) {
      expect(error(bad)).toBe(PATH_MESSAGES.packageRelative);
    }
    expect(error('a/\u0001b')).toBe(PATH_MESSAGES.unsupportedCharacters);
    expect(error('SKILL.md')).toBe(PATH_MESSAGES.reserved);
    expect(error('_meta.json')).toBe(PATH_MESSAGES.reserved);
    expect(error('references')).toBe(PATH_MESSAGES.mustBeDirectory('references'));
    expect(error(`${'d/'.repeat(17)}x`)).toBe(PATH_MESSAGES.tooDeep);
  });
});
