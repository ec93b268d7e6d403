import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AvailabilityProbe } from './skill-availability';
import { SkillCatalog } from './skill-catalog';
import { diagnosticKey, sanitizeDiagnostic } from './skill-diagnostics';
import { boundText } from './skill-helpers';
import { SkillStore } from './skill-store';

function md(name: string, description: string, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\nBody of ${name}.\n`;
}

describe(SkillCatalog.name, () => {
  let root: string;
  let store: SkillStore;
  const probe: AvailabilityProbe = { hasTool: () => true, mcpServerConfigured: () => false };

  beforeEach(async () => {
    root = await fs.mkdtemp(join(tmpdir(), 'cashcode-catalog-'));
    store = new SkillStore({
      builtin: join(root, 'builtin'),
      user: join(root, 'user'),
      agent: join(root, 'agent'),
      snapshots: join(root, 'snapshots'),
    });
    await store.prepare();
  });

  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  async function put(source: 'builtin' | 'user' | 'agent', name: string, content: string, meta?: unknown): Promise<void> {
    const dir = join(root, source, name);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(join(dir, 'SKILL.md'), content);
    if (meta !== undefined) await fs.writeFile(join(dir, '_meta.json'), JSON.stringify(meta));
  }

  const catalog = () => new SkillCatalog(store, probe, { binPath: '', envNames: new Set() });

  it('Scenario: precedence is builtin < user < agent and the winner lists the shadowed sources in order', async () => {
    await put('builtin', 'same', md('same', 'from builtin'));
    await put('user', 'same', md('same', 'from user'));
    await put('agent', 'same', md('same', 'from agent'));
    const c = catalog();
    await c.refresh();
    expect(c.get('same')?.record).toMatchObject({ source: 'agent', description: 'from agent', shadowed_sources: ['builtin', 'user'] });
  });

  it('Scenario: search ranks by BM25, adds the exact-name bonus, breaks ties by name and skips disabled Skills unless asked', async () => {
    await put('user', 'zeta', md('zeta', 'parse csv files'));
    await put('user', 'alpha', md('alpha', 'parse csv files'));
    await put('user', 'csv', md('csv', 'spreadsheets'));
    await put('user', 'muted', md('muted', 'parse csv files'), { enabled: false });
    const c = catalog();
    await c.refresh();
    expect(c.search('csv', { includeDisabled: false, limit: 10 }).map((h) => h.entry.record.name)).toEqual(['csv', 'alpha', 'zeta']);
    expect(c.search('parse csv', { includeDisabled: true, limit: 10 }).map((h) => h.entry.record.name)).toContain('muted');
    expect(c.search('  ', { includeDisabled: true, limit: 10 })).toEqual([]);
    expect(c.search('csv', { includeDisabled: false, limit: 1 })).toHaveLength(1);
  });

  it('Scenario: refresh re-reads only changed packages and follows additions and removals', async () => {
    await put('user', 'one', md('one', 'first'));
    const c = catalog();
    await c.refresh();
    const readSpy = jest.spyOn(store, 'readPackageSync');
    await c.refresh();
    expect(readSpy).not.toHaveBeenCalled();
    await put('user', 'two', md('two', 'second'));
    await c.refresh();
    expect(readSpy).toHaveBeenCalledTimes(1);
    await fs.rm(join(root, 'user', 'one'), { recursive: true });
    await c.refresh();
    expect(c.list().map((e) => e.record.name)).toEqual(['two']);
    expect(c.search('first', { includeDisabled: true, limit: 5 })).toEqual([]);
  });

  it('Scenario: diagnostics are bounded, redacted, keyed without collisions and capped at 100', async () => {
    for (let i = 0; i < 105; i++) await put('user', `bad${String(i).padStart(3, '0')}`, 'no frontmatter');
    const c = catalog();
    await c.refresh();
    expect(Object.keys(c.invalid())).toHaveLength(100);
    expect(sanitizeDiagnostic(`cannot open ${root}/user/x/SKILL.md and C:\\Users\\me\\x`, [root])).toBe(
      'cannot open <path>/user/x/SKILL.md and <path>',
    );
    expect(sanitizeDiagnostic("EACCES: permission denied, open '/srv/data/skills/x'", [])).toBe(
      "EACCES: permission denied, open '<path>'",
    );
    expect(sanitizeDiagnostic('   ', [])).toBe('invalid Skill package');
    expect(Array.from(sanitizeDiagnostic('x'.repeat(500), []))).toHaveLength(240);
    expect(diagnosticKey('user', `a\u0007b${'c'.repeat(100)}`)).toBe(`user:a b${'c'.repeat(74)}...`);
    expect(boundText('abc', 3)).toBe('abc');
  });

  it('Scenario: two directories whose keys collide get a hash suffix', async () => {
    const long = 'd'.repeat(90);
    await put('user', `${long}1`, 'garbage');
    await put('user', `${long}2`, 'garbage');
    const c = catalog();
    await c.refresh();
    const keys = Object.keys(c.invalid()).sort();
    expect(keys).toHaveLength(2);
    expect(keys.some((key) => /~[0-9a-f]{8}$/.test(key))).toBe(true);
  });
});
