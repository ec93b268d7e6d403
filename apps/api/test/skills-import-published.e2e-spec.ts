/**
 * Import of real published Skills (openspec skills "Requirement: ZIP import"): Anthropic's Apache-2.0 packages kept in
 * `test/fixtures/skills/` (see its README for sources and licences), zipped in the test as a `.zip`, as the
 * packager's `.skill`, inside a repository-style archive holding several Skills, and with a generated 240 KB support
 * file; every file must land byte for byte.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import request from 'supertest';
import type { SkillRecord } from '@cashcode/contracts';
import { SKILL_MESSAGES } from '../src/skills/skills.errors';
import { buildZip, listTree, type ZipEntrySpec } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';

const FIXTURES = join(__dirname, 'fixtures', 'skills', 'anthropics');

async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (current: string): Promise<void> => {
    for (const entry of await fs.readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out.set(relative(dir, full).split('\\').join('/'), await fs.readFile(full));
    }
  };
  await walk(dir);
  return out;
}

async function zipFolder(name: string, prefix: string, extra: Record<string, Buffer> = {}): Promise<ZipEntrySpec[]> {
  const files = await filesOf(join(FIXTURES, name));
  for (const [rel, data] of Object.entries(extra)) files.set(rel, data);
  return [...files].map(([rel, data]) => ({ name: `${prefix}${rel}`, data }));
}

describe('Import of published Skills (e2e)', () => {
  let t: TestApp;
  let builtinDir: string;

  beforeAll(async () => {
    builtinDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-published-builtin-'));
    const creator = join(builtinDir, 'skill-creator');
    await fs.mkdir(creator, { recursive: true });
    await fs.writeFile(
      join(creator, 'SKILL.md'),
      '---\nname: skill-creator\ndescription: The built-in Skill creator.\n---\n\nBuilt-in body.\n',
    );
    t = await startTestApp({ configOverrides: { skillsBuiltinDir: builtinDir } });
  });

  afterAll(async () => {
    await t?.close();
    await fs.rm(builtinDir, { recursive: true, force: true });
  });

  const upload = (zip: Buffer, filename: string, query = '') =>
    request(t.httpUrl).post(`/api/skills/import${query}`).attach('file', zip, { filename, contentType: 'application/zip' });

  async function expectIdentical(name: string, extra: Record<string, Buffer> = {}): Promise<void> {
    const expected = await filesOf(join(FIXTURES, name));
    for (const [rel, data] of Object.entries(extra)) expected.set(rel, data);
    const actual = await filesOf(join(t.config.skillsUserDir, name));
    actual.delete('_meta.json');
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [rel, data] of expected) expect({ rel, same: actual.get(rel)?.equals(data) }).toEqual({ rel, same: true });
  }

  it('Scenario: published Skills import byte-identical from a .zip (scripts, references, assets, binaries, LICENSE.txt)', async () => {
    for (const name of ['mcp-builder', 'web-artifacts-builder', 'theme-factory']) {
      const res = await upload(await buildZip(await zipFolder(name, `${name}/`)), `${name}.zip`);
      expect({ name, status: res.status }).toEqual({ name, status: 201 });
      expect((res.body as SkillRecord).name).toBe(name);
      await expectIdentical(name);
    }
  });

  it('Scenario: a .skill file from the packager imports like a .zip', async () => {
    const extra = { 'references/schema.xsd': Buffer.alloc(242_277, 'x') };
    // the package again (deleted first), with a generated 242,277-byte schema file like Anthropic's docx/pptx/xlsx
    const zip = await buildZip(await zipFolder('web-artifacts-builder', 'web-artifacts-builder/', extra));
    await request(t.httpUrl).delete('/api/skills/web-artifacts-builder').expect(204);
    const res = await upload(zip, 'web-artifacts-builder.skill');
    expect(res.status).toBe(201);
    await expectIdentical('web-artifacts-builder', extra);
  });

  it('Scenario: a support file over 5 MiB is refused naming the member and the limit', async () => {
    const before = await listTree(t.config.skillsUserDir);
    const entries = await zipFolder('mcp-builder', 'pkg/', { 'scripts/huge.xsd': Buffer.alloc(5 * 1024 * 1024 + 1, 'y') });
    const res = await upload(await buildZip(entries), 'pkg.zip');
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe(
      'archive member is too large: pkg/scripts/huge.xsd; it is 5,242,881 bytes; the limit is 5,242,880 bytes (5 MiB) per file',
    );
    expect(res.body.member).toBe('pkg/scripts/huge.xsd');
    expect(res.body.limit).toBe(5 * 1024 * 1024);
    expect(await listTree(t.config.skillsUserDir)).toEqual(before);
  });

  it('Scenario: a published Skill named like a built-in replaces it only when confirmed, and deleting it restores the built-in', async () => {
    const zip = await buildZip(await zipFolder('skill-creator', 'skill-creator/'));
    const refused = await upload(zip, 'skill-creator.zip');
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(SKILL_MESSAGES.existsBuiltin('skill-creator'));
    expect(refused.body.replace_builtin).toBe(true);
    // the confirmation as a form field (the select scenario below uses the query)
    const res = await request(t.httpUrl)
      .post('/api/skills/import')
      .field('replace_builtin', 'true')
      .attach('file', zip, { filename: 'skill-creator.zip', contentType: 'application/zip' });
    expect(res.status).toBe(201);
    expect(res.body.source).toBe('user');
    expect(res.body.shadows_builtin).toBe(true);
    expect(res.body.shadowed_sources).toEqual(['builtin']);
    await expectIdentical('skill-creator');
    const content = await request(t.httpUrl).get('/api/skills/skill-creator/content').expect(200);
    expect(content.body.content).toBe(await fs.readFile(join(FIXTURES, 'skill-creator', 'SKILL.md'), 'utf8'));
    await request(t.httpUrl).delete('/api/skills/skill-creator').expect(204);
    const restored = await request(t.httpUrl).get('/api/skills/skill-creator').expect(200);
    expect({ source: restored.body.source, shadows: restored.body.shadows_builtin }).toEqual({
      source: 'builtin',
      shadows: false,
    });
  });

  it('Scenario: a repository archive with several Skills lists them, and the selected ones are imported', async () => {
    await request(t.httpUrl).delete('/api/skills/mcp-builder');
    await request(t.httpUrl).delete('/api/skills/theme-factory');
    const entries: ZipEntrySpec[] = [
      { name: 'skills-main/README.md', data: '# Skills\n' },
      ...(await zipFolder('mcp-builder', 'skills-main/skills/mcp-builder/')),
      ...(await zipFolder('theme-factory', 'skills-main/skills/theme-factory/')),
      { name: 'skills-main/skills/broken/SKILL.md', data: 'no frontmatter' },
    ];
    const zip = await buildZip(entries);
    const before = await listTree(t.config.skillsUserDir);
    const listed = await upload(zip, 'skills-main.zip');
    expect(listed.status).toBe(422);
    expect(listed.body.code).toBe('skill_archive_multiple');
    expect(listed.body.skills).toEqual([
      { name: null, path: 'skills-main/skills/broken', description: null, error: 'SKILL.md must start with YAML frontmatter' },
      expect.objectContaining({ name: 'mcp-builder', path: 'skills-main/skills/mcp-builder', error: null }),
      expect.objectContaining({ name: 'theme-factory', path: 'skills-main/skills/theme-factory', error: null }),
    ]);
    expect(await listTree(t.config.skillsUserDir)).toEqual(before);
    const unknown = await upload(zip, 'skills-main.zip', '?select=nope');
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toBe(SKILL_MESSAGES.selectUnknown('nope', ['mcp-builder', 'theme-factory']));
    const bad = await upload(zip, 'skills-main.zip', '?replace_builtin=maybe');
    expect({ status: bad.status, detail: bad.body.detail }).toEqual({ status: 422, detail: SKILL_MESSAGES.replaceBuiltinInvalid });
    expect(await listTree(t.config.skillsUserDir)).toEqual(before);
    const res = await upload(zip, 'skills-main.zip', '?select=mcp-builder&select=theme-factory');
    expect(res.status).toBe(201);
    expect((res.body.imported as SkillRecord[]).map((r) => r.name)).toEqual(['mcp-builder', 'theme-factory']);
    await expectIdentical('mcp-builder');
    await expectIdentical('theme-factory');
  });

  it('Scenario: a failed multi-Skill import publishes none of them', async () => {
    await request(t.httpUrl).delete('/api/skills/theme-factory');
    const entries: ZipEntrySpec[] = [
      ...(await zipFolder('theme-factory', 'repo/skills/theme-factory/')),
      ...(await zipFolder('mcp-builder', 'repo/skills/mcp-builder/')),
    ];
    const before = await listTree(t.config.skillsUserDir);
    // mcp-builder is still imported from the previous scenario → 409, and theme-factory must not stay behind
    const res = await upload(await buildZip(entries), 'repo.zip', '?select=theme-factory&select=mcp-builder');
    expect(res.status).toBe(409);
    expect(await listTree(t.config.skillsUserDir)).toEqual(before);
  });
});
