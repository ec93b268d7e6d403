/**
 * Skill ZIP import (openspec skills "Requirement: ZIP import"; SECURITY.md "Skill ZIP import"): a hostile corpus built
 * in the test — each archive rejected with its message and nothing left on disk — and realistic packages (Agent Skills
 * layout, wrapper directory, binary files byte-for-byte, the archive's own _meta.json ignored).
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { PROBLEM_REASONS, type SkillRecord } from '@cashcode/contracts';
import { ARCHIVE_MESSAGES as A } from '../src/skills/skill-archive';
import { SKILL_MESSAGES } from '../src/skills/skills.errors';
import {
  buildZip,
  listTree,
  patchName,
  setDeclaredSize,
  setEntryFlags,
  skillMd,
  writePackage,
  type ZipEntrySpec,
} from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';

describe('Skill ZIP import (e2e)', () => {
  let t: TestApp;
  let builtinDir: string;

  beforeAll(async () => {
    builtinDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-import-builtin-'));
    await writePackage(builtinDir, 'taken', { 'SKILL.md': skillMd('taken') });
    t = await startTestApp({ configOverrides: { skillsBuiltinDir: builtinDir } });
  });

  afterAll(async () => {
    await t?.close();
    await fs.rm(builtinDir, { recursive: true, force: true });
  });

  const upload = (zip: Buffer, filename = 'skill.zip') =>
    request(t.httpUrl).post('/api/skills/import').attach('file', zip, { filename, contentType: 'application/zip' });

  async function catalogRevisionNames(): Promise<string[]> {
    const res = await request(t.httpUrl).get('/api/skills?page_size=200').expect(200);
    return (res.body.items as SkillRecord[]).map((r) => r.name);
  }

  /**
   * Upload must fail with 422 + message (a per-member rule's message followed by `: <member>…`), and neither the user
   * root nor the catalog may change.
   */
  async function expectRejected(zip: Buffer, detail: string, filename?: string): Promise<void> {
    const before = await listTree(t.config.skillsUserDir);
    const names = await catalogRevisionNames();
    const res = await upload(zip, filename);
    const received = typeof res.body.detail === 'string' ? (res.body.detail as string) : '';
    const rule = received.startsWith(`${detail}: `) ? detail : received;
    expect({ status: res.status, detail: rule }).toEqual({ status: 422, detail });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    // every refusal names its cause as a reason of the shared contracts (clients translate it)
    if (res.body.code === 'skill_validation') expect(PROBLEM_REASONS.skill_validation).toContain(res.body.reason);
    expect(await listTree(t.config.skillsUserDir)).toEqual(before);
    expect(await catalogRevisionNames()).toEqual(names);
  }

  const skill = (name = 'zipped', extra = '') => skillMd(name, { extra: extra || undefined });
  const zipOf = (entries: ZipEntrySpec[]) => buildZip(entries);

  describe('hostile archives', () => {
    it('Scenario: not a ZIP, oversized, empty, truncated → 422 with nothing on disk', async () => {
      await expectRejected(Buffer.from('PK'), A.invalidOrOversized);
      await expectRejected(Buffer.from('this is not a zip at all'), A.invalid);
      await expectRejected(await zipOf([]), A.empty);
      const good = await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/a.md', data: 'a'.repeat(5000) }]);
      await expectRejected(good.subarray(0, Math.floor(good.length / 2)), A.invalid);
      await expectRejected(good, SKILL_MESSAGES.notZip, 'skill.tar');
      const big = Buffer.concat([Buffer.from('PK'), Buffer.alloc(10 * 1024 * 1024)]);
      await expectRejected(big, SKILL_MESSAGES.zipTooLarge);
    });

    it('Scenario: 257 entries → too many entries', async () => {
      const entries: ZipEntrySpec[] = [{ name: 'SKILL.md', data: skill() }];
      for (let i = 0; i < 256; i++) entries.push({ name: `references/f${i}.md`, data: 'x' });
      await expectRejected(await zipOf(entries), A.tooManyEntries);
    });

    it('Scenario: traversal, absolute, drive-letter and backslash names → illegal path', async () => {
      const base = (placeholder: string) => zipOf([{ name: 'SKILL.md', data: skill() }, { name: placeholder, data: 'x' }]);
      await expectRejected(patchName(await base('ab/cd/SKILL.mx'), 'ab/cd/SKILL.mx', '../../SKILL.mx'), A.illegalPath);
      await expectRejected(patchName(await base('xetc/passwd'), 'xetc/passwd', '/etc/passwd'), A.illegalPath);
      await expectRejected(patchName(await base('Cx/evil.txt'), 'Cx/evil.txt', 'C:/evil.txt'), A.illegalPath);
      await expectRejected(patchName(await base('refs_x.md'), 'refs_x.md', 'refs\\x.md'), A.illegalPath);
      await expectRejected(patchName(await base('a/b/x.md'), 'a/b/x.md', 'a/./x.md'), A.illegalPath);
      await expectRejected(patchName(await base('a/bb/x.md'), 'a/bb/x.md', 'a//b/x.md'), A.illegalPath);
      await expectRejected(patchName(await base('zzz/x.md'), 'zzz/x.md', 'z\u0000z/x.md'), A.illegalPath);
    });

    it('Scenario: symlink and special-file entries, and a directory entry with a file mode, are rejected', async () => {
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/link', data: '/etc/passwd', mode: 0o120777 }]),
        A.symlinkOrSpecial,
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/fifo', data: '', mode: 0o010644 }]),
        A.symlinkOrSpecial,
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/', directory: true, mode: 0o100644 }]),
        A.unsupportedMember,
      );
    });

    it('Scenario: an entry with the encrypted flag is rejected', async () => {
      const zip = await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/secret.md', data: 'x' }]);
      await expectRejected(setEntryFlags(zip, 'references/secret.md', 0x1), A.encrypted);
    });

    it('Scenario: duplicates by case (and file vs directory spelling) and file/dir conflicts are rejected', async () => {
      await expectRejected(
        await zipOf([
          { name: 'SKILL.md', data: skill() },
          { name: 'references/Guide.md', data: 'a' },
          { name: 'references/guide.md', data: 'b' },
        ]),
        A.duplicates,
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'notes', data: 'file' }, { name: 'notes/', directory: true }]),
        A.duplicates,
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references/x', data: 'file' }, { name: 'references/x/y.md', data: 'y' }]),
        A.fileDirConflict,
      );
    });

    it('Scenario: oversized by declaration, cumulative size, a high-ratio bomb and lying sizes are rejected', async () => {
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'assets/big.bin', data: Buffer.alloc(5 * 1024 * 1024 + 1, 1) }]),
        A.memberTooLarge,
      );
      // a bomb: 30 MB of zeros compressing to a few KB, declared honestly
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'assets/bomb.bin', data: Buffer.alloc(30 * 1024 * 1024) }]),
        A.memberTooLarge,
      );
      const many: ZipEntrySpec[] = [{ name: 'SKILL.md', data: skill() }];
      for (let i = 0; i < 110; i++) many.push({ name: `assets/part${i}.bin`, data: Buffer.alloc(199_000) });
      await expectRejected(await zipOf(many), A.expandsTooMuch);
      // lying declarations: the bytes actually inflated are counted
      const lying = await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'assets/liar.bin', data: Buffer.alloc(6 * 1024 * 1024) }]);
      await expectRejected(setDeclaredSize(lying, 'assets/liar.bin', 1000), 'package file is too large');
      const short = await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'assets/short.bin', data: Buffer.alloc(1000, 7) }]);
      await expectRejected(setDeclaredSize(short, 'assets/short.bin', 900), A.invalid);
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill('zipped', `x: "${'y'.repeat(80_100)}"`) }]),
        'package file is too large',
      );
    });

    it('Scenario: layout rules — SKILL.md at the root or in exactly one top-level directory, nothing outside', async () => {
      await expectRejected(await zipOf([{ name: 'references/a.md', data: 'a' }]), A.layout);
      await expectRejected(
        await zipOf([{ name: 'one/SKILL.md', data: skill('one') }, { name: 'two/SKILL.md', data: skill('two') }]),
        SKILL_MESSAGES.multipleSkills(['one', 'two']),
      );
      await expectRejected(
        await zipOf([{ name: 'pkg/SKILL.md', data: skill() }, { name: 'stray.txt', data: 'x' }]),
        A.outside,
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'references', data: 'not a dir' }]),
        A.mustBeDirectory('references'),
      );
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: skill() }, { name: '_meta.json/x', data: '{}' }]),
        'invalid package path',
      );
    });

    it('Scenario: every per-member refusal names the member in the detail and as member, with the limit', async () => {
      const refuse = async (zip: Buffer) => {
        const res = await upload(zip);
        expect(res.status).toBe(422);
        return { detail: res.body.detail as string, member: res.body.member as string, limit: res.body.limit as number | undefined };
      };
      const base = [{ name: 'SKILL.md', data: skill() }];
      expect(await refuse(patchName(await zipOf([...base, { name: 'ab/cd/x.md', data: 'x' }]), 'ab/cd/x.md', '../../x.md'))).toEqual({
        detail: `${A.illegalPath}: ../../x.md`,
        member: '../../x.md',
        limit: undefined,
      });
      expect(await refuse(await zipOf([...base, { name: 'scripts/link', data: '/etc/passwd', mode: 0o120777 }]))).toEqual({
        detail: `${A.symlinkOrSpecial}: scripts/link`,
        member: 'scripts/link',
        limit: undefined,
      });
      const secret = setEntryFlags(await zipOf([...base, { name: 'references/secret.md', data: 'x' }]), 'references/secret.md', 0x1);
      expect((await refuse(secret)).member).toBe('references/secret.md');
      const many: ZipEntrySpec[] = [...base];
      for (let i = 0; i < 256; i++) many.push({ name: `references/f${i}.md`, data: 'x' });
      expect(await refuse(await zipOf(many))).toEqual({
        detail: `${A.tooManyEntries}: references/f255.md; the limit is 256 entries`,
        member: 'references/f255.md',
        limit: 256,
      });
      const big: ZipEntrySpec[] = [...base];
      for (let i = 0; i < 5; i++) big.push({ name: `assets/part${i}.bin`, data: Buffer.alloc(4_500_000) });
      const total = (Buffer.byteLength(skill()) + 5 * 4_500_000).toLocaleString('en-US');
      expect(await refuse(await zipOf(big))).toEqual({
        detail: `${A.expandsTooMuch}: assets/part4.bin; the files total ${total} bytes so far; the limit is 20,971,520 bytes (20 MiB)`,
        member: 'assets/part4.bin',
        limit: 20 * 1024 * 1024,
      });
    });

    it('Scenario: a refused ZIP import carries the reason a client translates', async () => {
      const reasonOf = async (zip: Buffer, filename?: string) => (await upload(zip, filename)).body.reason as string;
      expect(await reasonOf(Buffer.from('this is not a zip at all'))).toBe('archive_invalid');
      expect(await reasonOf(await zipOf([]))).toBe('archive_empty');
      expect(await reasonOf(await zipOf([{ name: 'SKILL.md', data: skill() }]), 'skill.tar')).toBe('zip_not_zip');
      const link = await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'scripts/link', data: '/etc/passwd', mode: 0o120777 }]);
      expect((await upload(link)).body).toMatchObject({ code: 'skill_validation', reason: 'archive_symlink', member: 'scripts/link' });
      expect(await reasonOf(await zipOf([{ name: 'SKILL.md', data: 'no frontmatter' }]))).toBe('skill_md_invalid');
      expect(await reasonOf(await zipOf([{ name: 'SKILL.md', data: skill() }, { name: 'scripts', data: 'x' }]))).toBe(
        'archive_must_be_directory',
      );
    });

    it('Scenario: SKILL.md must be UTF-8 with valid frontmatter', async () => {
      await expectRejected(
        await zipOf([{ name: 'SKILL.md', data: Buffer.concat([Buffer.from(skill()), Buffer.from([0xff, 0xfe])]) }]),
        A.notUtf8,
      );
      await expectRejected(await zipOf([{ name: 'SKILL.md', data: 'no frontmatter' }]), 'SKILL.md must start with YAML frontmatter');
    });

    it('Scenario: a name that exists in any root → 409 with nothing published', async () => {
      const before = await listTree(t.config.skillsUserDir);
      const res = await upload(await zipOf([{ name: 'SKILL.md', data: skill('taken') }]));
      expect(res.status).toBe(409);
      expect(res.body.detail).toBe(SKILL_MESSAGES.existsBuiltin('taken'));
      expect(res.body.replace_builtin).toBe(true);
      expect(await listTree(t.config.skillsUserDir)).toEqual(before);
    });
  });

  describe('valid archives', () => {
    it('Scenario: an Agent-Skills-style package imports unchanged (LICENSE.txt, scripts/, references/, allowed-tools)', async () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]);
      const content = [
        '---',
        'name: pdf-tools',
        'description: Extract text and tables from PDF files. Use when the user mentions PDFs.',
        'license: Complete terms in LICENSE.txt',
        'compatibility: Requires python3',
        'metadata:',
        '  author: example-org',
        '  version: "1.2"',
        'allowed-tools: Read Bash(python3:*)',
        '---',
        '',
        '# PDF tools',
        '',
        'Run `scripts/extract.py` on the file.',
        '',
      ].join('\n');
      const zip = await zipOf([
        { name: 'pdf-tools/', directory: true },
        { name: 'pdf-tools/SKILL.md', data: content },
        { name: 'pdf-tools/LICENSE.txt', data: 'Apache License 2.0' },
        { name: 'pdf-tools/FORMS.md', data: '# Forms' },
        { name: 'pdf-tools/scripts/extract.py', data: 'print("hi")\n', mode: 0o100755 },
        { name: 'pdf-tools/references/reference.md', data: '# Ref' },
        { name: 'pdf-tools/assets/logo.png', data: png, compress: false },
        { name: 'pdf-tools/_meta.json', data: JSON.stringify({ source: 'agent', enabled: false, agentCreated: true }) },
        { name: '__MACOSX/pdf-tools/._SKILL.md', data: 'resource fork' },
      ]);
      const res = await upload(zip, ' Pdf-Tools.ZIP ');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'pdf-tools',
        source: 'user',
        enabled: true,
        license: 'Complete terms in LICENSE.txt',
        compatibility: 'Requires python3',
        metadata: { author: 'example-org', version: '1.2' },
        allowed_tools: ['Read', 'Bash(python3:*)'],
      });
      expect(res.body.path).toBeUndefined();
      const dir = join(t.config.skillsUserDir, 'pdf-tools');
      expect(await listTree(dir)).toEqual([
        'FORMS.md',
        'LICENSE.txt',
        'SKILL.md',
        '_meta.json',
        'assets/',
        'assets/logo.png',
        'references/',
        'references/reference.md',
        'scripts/',
        'scripts/extract.py',
      ]);
      expect(await fs.readFile(join(dir, 'assets', 'logo.png'))).toEqual(png);
      // the archive's _meta.json was never trusted
      const meta = JSON.parse(await fs.readFile(join(dir, '_meta.json'), 'utf8'));
      expect(meta).toMatchObject({ source: 'user', enabled: true, agentCreated: false });
      // nothing is executable
      expect((await fs.stat(join(dir, 'scripts', 'extract.py'))).mode & 0o111).toBe(0);
      expect((await listTree(t.config.skillsUserDir)).filter((entry) => entry.startsWith('.'))).toEqual([]);
      // a second upload of the same package conflicts
      const again = await upload(zip);
      expect(again.status).toBe(409);
      expect(again.body.detail).toBe('Skill already exists in user: pdf-tools');
    });

    it('Scenario: a root-level package without a wrapper imports; a nested _meta.json is kept', async () => {
      const res = await upload(
        await zipOf([
          { name: 'SKILL.md', data: skill('flat-one') },
          { name: 'templates/_meta.json', data: '{"kept": true}' },
        ]),
      );
      expect(res.status).toBe(201);
      expect(await fs.readFile(join(t.config.skillsUserDir, 'flat-one', 'templates', '_meta.json'), 'utf8')).toBe('{"kept": true}');
    });
  });
});
