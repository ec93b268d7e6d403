/**
 * Skills REST (openspec skills): every endpoint and status code, precedence and shadowing, availability, diagnostics,
 * snapshots (none for a rejected edit), atomic publication and no host path in any response. The built-in root is a
 * temp directory of the test so the catalog is fully controlled.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { SkillListResponse, SkillRecord } from '@cashcode/contracts';
import { SKILL_MD_MESSAGES } from '@cashcode/skill-format';
import { SKILL_MESSAGES } from '../src/skills/skills.errors';
import { listTree, skillMd, writePackage } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';

describe('Skills REST (e2e)', () => {
  let t: TestApp;
  let builtinDir: string;
  let binDir: string;
  const api = () => request(t.httpUrl);

  beforeAll(async () => {
    builtinDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-skills-builtin-'));
    binDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-skills-bin-'));
    await fs.writeFile(join(binDir, 'present-tool'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    await writePackage(builtinDir, 'alpha', {
      'SKILL.md': skillMd('alpha', {
        description: 'Alpha charts and dashboards',
        extra: 'tags: [chart]\nrequires:\n  tools: [read_file, tool_search, skill_load]\n  bins: [present-tool]\n  env: [SKILLS_TEST_TOKEN]',
      }),
    });
    await writePackage(builtinDir, 'needs-things', {
      'SKILL.md': skillMd('needs-things', {
        description: 'Needs missing dependencies',
        extra: 'requires:\n  tools: [no_such_tool, mcp_anything_tool]\n  bins: [absent-binary]\n  env: [ABSENT_VAR]\n  mcp_servers: [no_such_server]',
      }),
    });
    await writePackage(builtinDir, 'shadowed', { 'SKILL.md': skillMd('shadowed', { description: 'Built-in version' }) });
    await writePackage(builtinDir, 'broken-builtin', { 'SKILL.md': 'no frontmatter here' });
    t = await startTestApp({
      configOverrides: {
        skillsBuiltinDir: builtinDir,
        skillBinPath: binDir,
        presentEnvNames: ['SKILLS_TEST_TOKEN'],
      },
    });
  });

  afterAll(async () => {
    await t?.close();
    await fs.rm(builtinDir, { recursive: true, force: true });
    await fs.rm(binDir, { recursive: true, force: true });
  });

  const userRoot = () => t.config.skillsUserDir;
  const agentRoot = () => t.config.skillsAgentDir;

  async function list(query = ''): Promise<SkillListResponse> {
    const res = await api().get(`/api/skills${query}`).expect(200);
    return res.body as SkillListResponse;
  }

  async function create(name: string, extra: Record<string, unknown> = {}, content = skillMd(name)) {
    return api().post('/api/skills').send({ name, content, ...extra });
  }

  function expectNoHostPath(body: unknown): void {
    const text = JSON.stringify(body);
    for (const dir of [t.dataDir, builtinDir, tmpdir()]) expect(text).not.toContain(dir);
  }

  async function expectProblem(res: request.Response, status: number, detail: string): Promise<void> {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toBe(detail);
  }

  describe('catalog and list', () => {
    it('Scenario: the list is sorted by name with the REST records and full diagnostics', async () => {
      const body = await list();
      expect(body.items.map((r) => r.name)).toEqual(['alpha', 'needs-things', 'shadowed']);
      expect(body.page).toBe(1);
      expect(body.page_size).toBe(50);
      const alpha = body.items[0] as SkillRecord;
      expect(alpha).toMatchObject({
        name: 'alpha',
        display_name: 'alpha',
        description: 'Alpha charts and dashboards',
        version: 1,
        tags: ['chart'],
        source: 'builtin',
        enabled: true,
        mutable: false,
        shadowed_sources: [],
        validation_errors: [],
      });
      expect(alpha.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(body.invalid).toEqual({ 'builtin:broken-builtin': [SKILL_MD_MESSAGES.noFrontmatter] });
      expectNoHostPath(body);
    });

    it('Scenario: availability sees bins, env, tools and MCP servers; meta tools count as present', async () => {
      const body = await list();
      const alpha = body.items.find((r) => r.name === 'alpha') as SkillRecord;
      expect(alpha.availability).toBe('available');
      expect(alpha.missing).toEqual([]);
      const needs = body.items.find((r) => r.name === 'needs-things') as SkillRecord;
      expect(needs.availability).toBe('missing_dependency');
      expect(needs.missing).toEqual(['bin:absent-binary', 'env:ABSENT_VAR', 'tool:no_such_tool', 'mcp:no_such_server']);
    });

    it('Scenario: page and page_size are validated (422) and paging keeps the total', async () => {
      await expectProblem(await api().get('/api/skills?page=0'), 422, 'page: page must be at least 1');
      expect((await api().get('/api/skills?page_size=201')).status).toBe(422);
      expect((await api().get('/api/skills?page_size=0')).status).toBe(422);
      expect((await api().get('/api/skills?source=system')).status).toBe(422);
      expect((await api().get('/api/skills?availability=maybe')).status).toBe(422);
      const page = await list('?page=2&page_size=2');
      expect(page.items.map((r) => r.name)).toEqual(['shadowed']);
      expect(page.total).toBe(3);
      const past = await list('?page=9&page_size=2');
      expect(past.items).toEqual([]);
      expect(past.total).toBe(3);
    });

    it('Scenario: filters by source, enabled and availability leave the diagnostics untouched', async () => {
      const filtered = await list('?availability=missing_dependency');
      expect(filtered.items.map((r) => r.name)).toEqual(['needs-things']);
      expect(filtered.invalid).toEqual({ 'builtin:broken-builtin': [SKILL_MD_MESSAGES.noFrontmatter] });
      expect((await list('?source=user')).items).toEqual([]);
      expect((await list('?enabled=false')).items).toEqual([]);
    });

    it('Scenario: a query ranks by BM25 (exact name first), and a whitespace-only query finds nothing', async () => {
      const hits = await list('?query=alpha');
      expect(hits.items[0]?.name).toBe('alpha');
      const charts = await list('?query=dashboards');
      expect(charts.items.map((r) => r.name)).toEqual(['alpha']);
      const blank = await list('?query=%20%20');
      expect(blank.total).toBe(0);
    });

    it('Scenario: a manually placed user package shadows the built-in one and lists shadowed_sources', async () => {
      await writePackage(userRoot(), 'shadowed', { 'SKILL.md': skillMd('shadowed', { description: 'User version' }) });
      const record = (await list()).items.find((r) => r.name === 'shadowed') as SkillRecord;
      expect(record.source).toBe('user');
      expect(record.description).toBe('User version');
      expect(record.shadowed_sources).toEqual(['builtin']);
      // deleting the user package makes the built-in effective again (with a snapshot)
      await api().delete('/api/skills/shadowed').expect(204);
      const after = (await list()).items.find((r) => r.name === 'shadowed') as SkillRecord;
      expect(after.source).toBe('builtin');
      expect(after.shadowed_sources).toEqual([]);
      expect(await listTree(join(t.config.skillSnapshotsDir, 'user', 'shadowed'))).toHaveLength(2);
    });
  });

  describe('create', () => {
    it('Scenario: a user Skill is created with support files and a server-owned _meta.json (201, logical path)', async () => {
      const res = await create('created-one', {
        support_files: { 'references/guide.md': '# Guide', 'LICENSE.txt': 'MIT', 'examples/a/b.txt': 'b' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'created-one', source: 'user', enabled: true, mutable: true, path: 'skills/user/created-one' });
      expectNoHostPath(res.body);
      expect(await listTree(join(userRoot(), 'created-one'))).toEqual([
        'LICENSE.txt',
        'SKILL.md',
        '_meta.json',
        'examples/',
        'examples/a/',
        'examples/a/b.txt',
        'references/',
        'references/guide.md',
      ]);
      const meta = JSON.parse(await fs.readFile(join(userRoot(), 'created-one', '_meta.json'), 'utf8'));
      expect(meta).toMatchObject({ source: 'user', enabled: true, storage_version: 1, agentCreated: false });
      expect(typeof meta.updated_at).toBe('number');
    });

    it('Scenario: create can target the agent root and start disabled', async () => {
      const res = await create('agent-made', { source: 'agent', enabled: false });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ source: 'agent', enabled: false, availability: 'disabled', path: 'skills/agent/agent-made' });
      expect(JSON.parse(await fs.readFile(join(agentRoot(), 'agent-made', '_meta.json'), 'utf8')).agentCreated).toBe(true);
    });

    it('Scenario: create is rejected with 403/409/422 and leaves nothing behind', async () => {
      await expectProblem(await create('x-builtin', { source: 'builtin' }), 403, SKILL_MESSAGES.builtinReadOnly);
      await expectProblem(await create('Bad Name'), 422, SKILL_MD_MESSAGES.invalidName);
      await expectProblem(await create('ok-name', {}, skillMd('other-name')), 422, SKILL_MD_MESSAGES.nameMismatch);
      await expectProblem(await create('ok-name', {}, 'plain text'), 422, SKILL_MD_MESSAGES.noFrontmatter);
      await expectProblem(
        await create('ok-name', { support_files: { '../escape.md': 'x' } }),
        422,
        'support path must be package-relative',
      );
      await expectProblem(await create('ok-name', { support_files: { '_meta.json': '{}' } }), 422, 'support path must not be SKILL.md or _meta.json');
      await expectProblem(await create('ok-name', { support_files: { references: 'x' } }), 422, 'references must be a directory');
      expect((await create('ok-name', { source: 'system' })).status).toBe(422);
      expect((await api().post('/api/skills').send({ content: skillMd('x') })).status).toBe(422);
      // a name that exists in any root, even as an invalid package, is a conflict
      await expectProblem(await create('alpha'), 409, 'Skill already exists in builtin: alpha');
      await expectProblem(await create('broken-builtin'), 409, 'Skill already exists in builtin: broken-builtin');
      await fs.mkdir(join(agentRoot(), 'odd-dir'), { recursive: true });
      await expectProblem(await create('odd-dir'), 409, 'Skill already exists in agent: odd-dir');
      await fs.rm(join(agentRoot(), 'odd-dir'), { recursive: true });
      const leftovers = (await listTree(userRoot())).filter((entry) => entry.startsWith('.') || entry.startsWith('ok-name'));
      expect(leftovers).toEqual([]);
    });
  });

  describe('get, content, validate', () => {
    it('Scenario: get returns the record with a body preview and versions; unknown → 404', async () => {
      await create('detailed', {}, skillMd('detailed', { body: 'B'.repeat(4100) }));
      const res = await api().get('/api/skills/detailed').expect(200);
      expect(res.body).toMatchObject({ name: 'detailed', path: 'skills/user/detailed', body_truncated: true, versions: [] });
      expect(res.body.body_preview).toHaveLength(4000);
      expectNoHostPath(res.body);
      await expectProblem(await api().get('/api/skills/nope'), 404, SKILL_MESSAGES.notFound);
      await expectProblem(await api().get('/api/skills/import'), 404, SKILL_MESSAGES.notFound);
    });

    it('Scenario: content returns SKILL.md and its hash; invalid name → 422, unknown → 404', async () => {
      const res = await api().get('/api/skills/alpha/content').expect(200);
      expect(res.body).toEqual({
        name: 'alpha',
        display_name: 'alpha',
        content: await fs.readFile(join(builtinDir, 'alpha', 'SKILL.md'), 'utf8'),
        hash: (await list()).items.find((r) => r.name === 'alpha')?.hash,
        source: 'builtin',
        mutable: false,
      });
      await expectProblem(await api().get('/api/skills/BAD!/content'), 422, SKILL_MD_MESSAGES.invalidName);
      await expectProblem(await api().get('/api/skills/missing-one/content'), 404, 'Skill not found: missing-one');
    });

    it('Scenario: content reflects a change made on disk', async () => {
      await create('disk-edit');
      const edited = skillMd('disk-edit', { description: 'Edited on disk' });
      await fs.writeFile(join(userRoot(), 'disk-edit', 'SKILL.md'), edited);
      const res = await api().get('/api/skills/disk-edit/content').expect(200);
      expect(res.body.content).toBe(edited);
    });

    it('Scenario: validate checks the package on disk or a draft; unknown → 404', async () => {
      const ok = await api().post('/api/skills/alpha/validate').send({}).expect(200);
      expect(ok.body).toMatchObject({ valid: true, name: 'alpha', errors: [] });
      const draft = await api().post('/api/skills/alpha/validate').send({ content: skillMd('renamed') }).expect(200);
      expect(draft.body).toEqual({ valid: false, errors: [SKILL_MD_MESSAGES.nameMismatch] });
      await expectProblem(await api().post('/api/skills/ghost/validate').send({}), 404, SKILL_MESSAGES.notFound);
    });
  });

  describe('replace, enable, versions, rollback, delete', () => {
    it('Scenario: replace checks expected_hash (409) and a rejected edit creates no snapshot', async () => {
      const created = (await create('editable', { support_files: { 'assets/blob.bin': 'placeholder' } })).body as SkillRecord;
      const binary = Buffer.from([0, 255, 1, 254, 10, 13, 0x80]);
      await fs.writeFile(join(userRoot(), 'editable', 'assets', 'blob.bin'), binary);
      await expectProblem(
        await api().put('/api/skills/editable').send({ content: skillMd('editable'), expected_hash: 'f'.repeat(64) }),
        409,
        SKILL_MESSAGES.changed,
      );
      await expectProblem(
        await api().put('/api/skills/editable').send({ content: skillMd('renamed'), expected_hash: created.hash }),
        422,
        SKILL_MD_MESSAGES.nameMismatch,
      );
      expect((await api().get('/api/skills/editable/versions').expect(200)).body).toEqual({ name: 'editable', versions: [] });

      const content = skillMd('editable', { description: 'Second version' });
      const res = await api().put('/api/skills/editable').send({ content, expected_hash: created.hash }).expect(200);
      expect(res.body).toMatchObject({ name: 'editable', description: 'Second version', path: 'skills/user/editable' });
      expect(res.body.snapshot).toMatch(/^\d+-[0-9a-f]{8}$/);
      expectNoHostPath(res.body);
      // support_files null: every other file kept byte-for-byte (binary assets, _meta.json)
      expect(await fs.readFile(join(userRoot(), 'editable', 'assets', 'blob.bin'))).toEqual(binary);
      expect(await fs.readFile(join(userRoot(), 'editable', 'SKILL.md'), 'utf8')).toBe(content);
      const versions = (await api().get('/api/skills/editable/versions').expect(200)).body.versions as string[];
      expect(versions).toEqual([res.body.snapshot]);
      expect(await fs.readFile(join(t.config.skillSnapshotsDir, 'user', 'editable', versions[0] as string, 'SKILL.md'), 'utf8')).toBe(
        skillMd('editable'),
      );
      expect((await listTree(userRoot())).filter((entry) => entry.startsWith('.'))).toEqual([]);
    });

    it('Scenario: replace with support_files rebuilds the package with only those files', async () => {
      await create('rebuilt', { support_files: { 'references/old.md': 'old' } });
      await api()
        .put('/api/skills/rebuilt')
        .send({ content: skillMd('rebuilt'), support_files: { 'templates/new.txt': 'new' } })
        .expect(200);
      expect(await listTree(join(userRoot(), 'rebuilt'))).toEqual(['SKILL.md', '_meta.json', 'templates/', 'templates/new.txt']);
    });

    it('Scenario: replace, enable, delete and rollback of unknown or built-in Skills → 404 / 403', async () => {
      await expectProblem(await api().put('/api/skills/ghost').send({ content: 'x' }), 404, 'Skill not found: ghost');
      await expectProblem(await api().put('/api/skills/alpha').send({ content: skillMd('alpha') }), 403, SKILL_MESSAGES.builtinReadOnly);
      await expectProblem(await api().patch('/api/skills/ghost/enabled').send({ enabled: false }), 404, 'Skill not found: ghost');
      await expectProblem(await api().patch('/api/skills/alpha/enabled').send({ enabled: false }), 403, SKILL_MESSAGES.builtinReadOnly);
      expect((await api().patch('/api/skills/alpha/enabled').send({ enabled: 'no' })).status).toBe(422);
      await expectProblem(await api().delete('/api/skills/ghost'), 404, 'Skill not found: ghost');
      await expectProblem(await api().delete('/api/skills/alpha'), 403, SKILL_MESSAGES.builtinReadOnly);
      await expectProblem(await api().post('/api/skills/ghost/rollback/1-abcdef12'), 404, 'Skill not found: ghost');
      await expectProblem(await api().post('/api/skills/alpha/rollback/1-abcdef12'), 403, SKILL_MESSAGES.builtinReadOnly);
      expect((await api().get('/api/skills/alpha/versions').expect(200)).body).toEqual({ name: 'alpha', versions: [] });
      await expectProblem(await api().get('/api/skills/ghost/versions'), 404, SKILL_MESSAGES.notFound);
    });

    it('Scenario: disabling sets availability disabled and _meta.json; the list can filter it', async () => {
      await create('switchable');
      const res = await api().patch('/api/skills/switchable/enabled').send({ enabled: false }).expect(200);
      expect(res.body).toMatchObject({ enabled: false, availability: 'disabled', path: 'skills/user/switchable' });
      const meta = JSON.parse(await fs.readFile(join(userRoot(), 'switchable', '_meta.json'), 'utf8'));
      expect(meta.enabled).toBe(false);
      expect((await list('?enabled=false')).items.map((r) => r.name)).toContain('switchable');
      // disabled Skills are still found by the REST search
      expect((await list('?query=switchable')).items.map((r) => r.name)).toEqual(['switchable']);
      await api().patch('/api/skills/switchable/enabled').send({ enabled: true }).expect(200);
    });

    it('Scenario: rollback restores a snapshot (after snapshotting the current package); bad versions → 422/404', async () => {
      await create('rollme', {}, skillMd('rollme', { description: 'v1' }));
      const first = await api().put('/api/skills/rollme').send({ content: skillMd('rollme', { description: 'v2' }) }).expect(200);
      await expectProblem(await api().post('/api/skills/rollme/rollback/..%2F..%2Fx'), 422, SKILL_MESSAGES.invalidVersion);
      await expectProblem(await api().post('/api/skills/rollme/rollback/..'), 422, SKILL_MESSAGES.invalidVersion);
      await expectProblem(await api().post('/api/skills/rollme/rollback/1-00000000'), 404, 'snapshot not found: 1-00000000');
      const res = await api().post(`/api/skills/rollme/rollback/${first.body.snapshot}`).expect(200);
      expect(res.body).toMatchObject({ name: 'rollme', description: 'v1', path: 'skills/user/rollme' });
      const versions = (await api().get('/api/skills/rollme/versions')).body.versions as string[];
      expect(versions).toHaveLength(2);
      expect(versions[0]! > versions[1]!).toBe(true);
    });
  });

  describe('invalid packages', () => {
    it('Scenario: invalid packages are reported redacted and bounded, never listed as Skills', async () => {
      await writePackage(userRoot(), 'bad-yaml', { 'SKILL.md': '---\nname: [oops\n---\nbody\n' });
      await writePackage(userRoot(), 'bad-entry', { 'SKILL.md': skillMd('bad-entry'), 'weird\u0001name': 'x' });
      await writePackage(userRoot(), `long-${'x'.repeat(100)}`, { 'README.md': 'no skill' });
      await writePackage(userRoot(), 'big-support', {
        'SKILL.md': skillMd('big-support'),
        'references/huge.txt': Buffer.alloc(5 * 1024 * 1024 + 1, 0x61),
      });
      await fs.mkdir(join(userRoot(), 'linked'), { recursive: true });
      await fs.writeFile(join(userRoot(), 'linked', 'SKILL.md'), skillMd('linked'));
      await fs.symlink('/etc', join(userRoot(), 'linked', 'references'));
      const body = await list();
      expect(body.items.map((r) => r.name)).not.toEqual(expect.arrayContaining(['bad-yaml', 'bad-entry', 'big-support', 'linked']));
      expect(body.invalid['user:bad-yaml']?.[0]).toMatch(/^invalid YAML frontmatter: /);
      // control characters become spaces in diagnostics
      expect(body.invalid['user:bad-entry']).toEqual(['unsupported package entry: weird name']);
      expect(body.invalid['user:big-support']).toEqual(['supporting file is too large: references/huge.txt']);
      expect(body.invalid['user:linked']).toEqual(['symlink escapes package: references']);
      const longKey = Object.keys(body.invalid).find((key) => key.startsWith('user:long-')) as string;
      expect(Array.from(longKey.slice('user:'.length))).toHaveLength(80);
      expect(longKey.endsWith('...')).toBe(true);
      expect(body.invalid[longKey]).toEqual(['SKILL.md not found']);
      for (const messages of Object.values(body.invalid)) for (const m of messages) expect(Array.from(m).length).toBeLessThanOrEqual(240);
      expectNoHostPath(body);
    });

    it('Scenario: delete-invalid validates its selector and moves the package into the invalid snapshots', async () => {
      await writePackage(userRoot(), 'to-remove', { 'SKILL.md': 'garbage' });
      await expectProblem(await api().delete('/api/skills/invalid/system/to-remove'), 422, SKILL_MESSAGES.invalidSource);
      await expectProblem(await api().delete('/api/skills/invalid/builtin/broken-builtin'), 403, SKILL_MESSAGES.builtinReadOnly);
      await expectProblem(await api().delete('/api/skills/invalid/user/..'), 422, SKILL_MESSAGES.invalidSelector);
      await expectProblem(await api().delete('/api/skills/invalid/user/a%5Cb'), 422, SKILL_MESSAGES.invalidSelector);
      await expectProblem(await api().delete('/api/skills/invalid/user/not-there'), 404, SKILL_MESSAGES.invalidNotFound);
      await expectProblem(await api().delete('/api/skills/invalid/agent/to-remove'), 404, SKILL_MESSAGES.invalidNotFound);
      // reported as invalid, then fixed on disk: now valid → 409
      await writePackage(userRoot(), 'fixed-later', { 'SKILL.md': 'garbage' });
      expect((await list()).invalid['user:fixed-later']).toBeDefined();
      await fs.writeFile(join(userRoot(), 'fixed-later', 'SKILL.md'), skillMd('fixed-later'));
      await expectProblem(await api().delete('/api/skills/invalid/user/fixed-later'), 409, SKILL_MESSAGES.invalidIsValid);

      const res = await api().delete('/api/skills/invalid/user/to-remove').expect(200);
      expect(res.body.source).toBe('user');
      expect(res.body.directory).toBe('to-remove');
      expect(res.body.snapshot).toMatch(/^invalid\/user\/[0-9a-f]{16}\/\d+-[0-9a-f]{8}$/);
      await expect(fs.stat(join(userRoot(), 'to-remove'))).rejects.toThrow();
      expect(await fs.readFile(join(t.config.skillSnapshotsDir, res.body.snapshot, 'SKILL.md'), 'utf8')).toBe('garbage');
      expect((await list()).invalid['user:to-remove']).toBeUndefined();
    });
  });
});
