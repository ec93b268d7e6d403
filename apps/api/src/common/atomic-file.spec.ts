import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempPathFor, writeFileAtomic, writeJsonAtomic } from './atomic-file';

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-atomic-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: writes a new file and replaces an existing one, leaving no temp file', async () => {
    const target = join(dir, 'metadata.json');
    await writeFileAtomic(target, 'one');
    await writeFileAtomic(target, Buffer.from('two'));
    expect(await fs.readFile(target, 'utf8')).toBe('two');
    expect(await fs.readdir(dir)).toEqual(['metadata.json']);
  });

  it('Scenario: applies the requested mode exactly (0600 secrets)', async () => {
    const target = join(dir, 'llm.json');
    await writeJsonAtomic(target, { a: 1 }, { mode: 0o600 });
    expect((await fs.stat(target)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await fs.readFile(target, 'utf8'))).toEqual({ a: 1 });
  });

  it('Scenario: a failed write leaves the old content and no temp file', async () => {
    const target = join(dir, 'sub');
    await fs.mkdir(target);
    await fs.writeFile(join(target, 'keep'), 'x');
    // Renaming a file over a non-empty directory fails.
    await expect(writeFileAtomic(target, 'data')).rejects.toThrow();
    expect((await fs.readdir(dir)).sort()).toEqual(['sub']);
  });

  it('Scenario: temp names are hidden and live next to the target', () => {
    const temp = tempPathFor('/a/b/servers.json');
    expect(temp).toMatch(new RegExp(`^/a/b/\\.servers\\.json\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`));
  });
});
