// node --test scripts/check-references.test.mjs
// The reference check on small fixture repositories (what it reports and what it lets pass), then on this repository.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Buffer } from 'node:buffer';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, 'check-references.mjs');
const repositoryRoot = join(here, '..');
const fixtures = [];
after(() => fixtures.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A git repository with the given files, all tracked. */
function fixture(files) {
  const dir = mkdtempSync(join(tmpdir(), 'check-refs-'));
  fixtures.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  execFileSync('git', ['init', '-q'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  return dir;
}

function check(dir) {
  const result = spawnSync('node', [script, '--root', dir], { encoding: 'utf8' });
  return { status: result.status, out: result.stdout };
}

describe('check-references', () => {
  it('reports numbered sections, ../shared paths and missing documents with file:line', () => {
    const dir = fixture({
      'README.md': '# x\n\nSee [the design](docs/DESIGN.md).\n',
      'apps/a.ts': '// ok\n/** Rules of spec §4.2. */\n// see ../shared/notes.txt\n// as DESIGN.md #3 says\n',
      'apps/b.ts': '// the layout of openspec/specs/nothing/spec.md\n',
      'openspec/specs/chat/spec.md': '### Requirement: chat\n',
    });
    const { status, out } = check(dir);
    assert.equal(status, 1);
    assert.match(out, /^README\.md:3: links to docs\/DESIGN\.md/m);
    assert.match(out, /^apps\/a\.ts:2: cites a numbered section/m);
    assert.match(out, /^apps\/a\.ts:3: refers to \.\.\/shared\/notes\.txt/m);
    assert.match(out, /^apps\/a\.ts:4: refers to DESIGN\.md/m);
    assert.match(out, /^apps\/b\.ts:1: refers to openspec\/specs\/nothing\/spec\.md/m);
    assert.match(out, /5 reference\(s\) to things outside the repository in 3 file\(s\)/);
  });

  it('lets in-repository references, run-time file names and resolvable ../shared imports pass', () => {
    const dir = fixture({
      'SECURITY.md': '# Security\n\nSee [the spec](openspec/specs/x/spec.md) and [arch](./SECURITY.md#top).\n',
      'openspec/specs/x/spec.md': '### Requirement: x\n',
      'apps/ui/shared/icon.ts': 'export const icon = 1;\n',
      'apps/ui/page/page.ts':
        "import { icon } from '../shared/icon';\n// SKILL.md, MEMORY.md, SOUL.md, notes/todo.md, SECURITY.md\n" +
        '// data/skills/user/x/SKILL.md and data/memory/a.md are run-time paths\n',
      'package-lock.json': '{"x": "§1"}\n',
      'bin.dat': Buffer.from([0, 0xa7, 0x31, 0]),
    });
    const { status, out } = check(dir);
    assert.equal(status, 0, out);
    assert.match(out, /no references outside the repository/);
  });

  it('this repository refers to nothing outside it', () => {
    const { status, out } = check(repositoryRoot);
    assert.equal(status, 0, out);
  });
});
