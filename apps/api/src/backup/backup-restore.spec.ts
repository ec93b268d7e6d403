import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { ZipFile } from 'yazl';
import { openSqlite } from '../common/sqlite';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupManifest, MANIFEST_MEMBER } from './backup-format';
import { BackupArchiveError, openBackupArchive } from './backup-archive-reader';
import { RestoreRefusedError, restoreBackup } from './backup-restore';
import { type BackupLocations, backupLocations } from './backup-sources';
import { writeBackup } from './backup-writer';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

interface Dirs {
  root: string;
  locations: BackupLocations;
}

async function dirsIn(root: string): Promise<Dirs> {
  await fs.mkdir(root, { recursive: true });
  const dataDir = join(root, 'data');
  return {
    root,
    locations: backupLocations({
      dataDir,
      memoryDir: join(dataDir, 'memory'),
      workspaceDir: join(dataDir, 'workspace'),
      logDir: join(dataDir, 'logs'),
      configDir: join(root, 'config'),
    }),
  };
}

async function put(file: string, content: string | Buffer): Promise<void> {
  await fs.mkdir(join(file, '..'), { recursive: true });
  await fs.writeFile(file, content);
}

/** A small data directory with one file of each kind. */
async function populate({ locations: l }: Dirs): Promise<void> {
  await put(join(l.memoryDir, 'chat-a', 'history.jsonl'), '{"role":"user","content":"hi","cursor":1}\n{"role":"assistant","content":"hello","cursor":2}\n');
  await put(join(l.memoryDir, 'chat-a', 'metadata.json'), '{"title":"Greeting"}\n');
  await put(join(l.memoryDir, 'MEMORY.md'), '# Facts\n- likes tea\n');
  await put(join(l.memoryDir, '.dreams', 'snapshots', 'run-1.md'), '# Facts\n');
  await put(join(l.dataDir, 'skills', 'user', 'tea', 'SKILL.md'), '---\nname: tea\ndescription: Tea.\n---\nBrew.\n');
  await put(join(l.dataDir, 'approvals', 'audit.jsonl'), '{"decision":"allow_once"}\n');
  await put(join(l.dataDir, 'mcp', 'servers.json'), JSON.stringify({ servers: { web: { url: 'https://mcp.example', headers: { Authorization: 'Bearer s3cret' } } } }));
  await put(join(l.dataDir, 'mcp', 'oauth', 'web.json'), '{"access_token":"tok"}');
  await put(join(l.dataDir, 'memory-index', 'sessions.sqlite'), 'derived');
  await put(join(l.dataDir, 'logs', 'cashcode.log'), 'log line\n');
  await put(join(l.dataDir, '.cashcode.lock'), '{}');
  await put(join(l.attachmentsDir, 'chat-a', 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  await put(join(l.settingsDir, 'llm.json'), JSON.stringify({ version: 2, openai_compatible: { base_url: 'https://api.example/v1', api_key: 'sk-live-123', api_key_origin: 'https://api.example' } }));
  await put(join(l.settingsDir, 'api-token'), 'token-0123456789abcdef\n');
  const old = new Date('2025-01-02T03:04:05Z');
  await fs.utimes(join(l.memoryDir, 'chat-a', 'history.jsonl'), old, old);
  const db = openSqlite(join(l.dataDir, 'usage', 'ledger.sqlite'));
  db.exec('CREATE TABLE calls (id INTEGER PRIMARY KEY, model TEXT)');
  db.prepare('INSERT INTO calls (model) VALUES (?)').run('m1');
  db.close();
}

/** Rewrites an archive member by member through `edit` (a new, well-formed ZIP with valid CRCs). */
async function rewriteArchive(source: string, target: string, edit: (name: string, data: Buffer) => Buffer | null): Promise<void> {
  const yauzl = await import('yauzl');
  const zip = await yauzl.openPromise(source, { lazyEntries: true, autoClose: false });
  const entries: import('yauzl').Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: import('yauzl').Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', resolve);
    zip.once('error', reject);
    zip.readEntry();
  });
  const out = new ZipFile();
  for (const entry of entries) {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    const data = edit(entry.fileName, Buffer.concat(chunks));
    if (data !== null) out.addBuffer(data, entry.fileName);
  }
  zip.close();
  out.end();
  await pipeline(out.outputStream, createWriteStream(target));
}

describe('backup and restore', () => {
  let base: string;
  let source: Dirs;
  let target: Dirs;
  let archive: string;

  beforeEach(async () => {
    base = await fs.mkdtemp(join(tmpdir(), 'cashcode-backup-'));
    source = await dirsIn(join(base, 'source'));
    target = await dirsIn(join(base, 'target'));
    archive = join(base, 'out', 'backup.zip');
    await populate(source);
  });

  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  async function listFiles(dir: string, prefix = ''): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) out.push(...(await listFiles(join(dir, entry.name), rel)));
      else out.push(rel);
    }
    return out.sort();
  }

  it('Scenario: a restore round trip gives back every file byte for byte', async () => {
    const summary = await writeBackup(source.locations, { target: archive, includeSecrets: true, appVersion: '0.1.0' });
    expect(summary.manifest.files.map((f) => f.path)).toEqual([
      'attachments/chat-a/photo.png',
      'config/settings/api-token',
      'config/settings/llm.json',
      'data/approvals/audit.jsonl',
      'data/mcp/oauth/web.json',
      'data/mcp/servers.json',
      'data/skills/user/tea/SKILL.md',
      'data/usage/ledger.sqlite',
      'memory/.dreams/snapshots/run-1.md',
      'memory/MEMORY.md',
      'memory/chat-a/history.jsonl',
      'memory/chat-a/metadata.json',
    ]);
    const result = await restoreBackup(target.locations, { archive, force: false });
    expect(result.files).toBe(12);
    for (const file of summary.manifest.files) {
      if (file.kind === 'sqlite') continue;
      const rel = file.path.split('/').slice(1).join('/');
      const places: Record<string, [string, string]> = {
        data: [source.locations.dataDir, target.locations.dataDir],
        memory: [source.locations.memoryDir, target.locations.memoryDir],
        attachments: [source.locations.attachmentsDir, target.locations.attachmentsDir],
        config: [join(source.locations.settingsDir, '..'), join(target.locations.settingsDir, '..')],
      };
      const [from, to] = places[file.path.split('/')[0] as string] as [string, string];
      const restored = await fs.readFile(join(to, rel));
      expect(restored.equals(await fs.readFile(join(from, rel)))).toBe(true);
      // the modification time comes back too (chat lists are ordered by it)
      expect(Math.round((await fs.stat(join(to, rel))).mtimeMs)).toBe(Math.round((await fs.stat(join(from, rel))).mtimeMs));
      expect((await fs.stat(join(to, rel))).mode & 0o777).toBe(0o600);
    }
    const db = openSqlite(join(target.locations.dataDir, 'usage', 'ledger.sqlite'));
    expect(db.prepare('SELECT model FROM calls').all()).toEqual([{ model: 'm1' }]);
    db.close();
    // derived and runtime files are not restored
    const restoredData = await listFiles(target.locations.dataDir);
    expect(restoredData.some((p) => p.startsWith('memory-index') || p.startsWith('logs') || p === '.cashcode.lock')).toBe(false);
  });

  it('Scenario: a backup with secrets is owner-only', async () => {
    const summary = await writeBackup(source.locations, { target: archive, includeSecrets: true, appVersion: '0.1.0' });
    expect(summary.manifest.secrets).toBe(true);
    expect((await fs.stat(archive)).mode & 0o777).toBe(0o600);
    const open = await openBackupArchive(archive);
    open.zip.close();
    const paths = open.manifest.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['config/settings/api-token', 'data/mcp/oauth/web.json']));
    expect(open.manifest.files.find((f) => f.path === 'config/settings/llm.json')?.kind).toBe('file');
  });

  it('Scenario: secrets are left out unless asked for', async () => {
    const summary = await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    const paths = summary.manifest.files.map((f) => f.path);
    expect(paths).not.toContain('config/settings/api-token');
    expect(paths).not.toContain('data/mcp/oauth/web.json');
    expect(summary.manifest.files.find((f) => f.path === 'config/settings/llm.json')?.kind).toBe('redacted');
    await restoreBackup(target.locations, { archive, force: false });
    const llm = JSON.parse(await fs.readFile(join(target.locations.settingsDir, 'llm.json'), 'utf8'));
    expect(llm).toEqual({ version: 2, openai_compatible: { base_url: 'https://api.example/v1' } });
    const servers = JSON.parse(await fs.readFile(join(target.locations.dataDir, 'mcp', 'servers.json'), 'utf8'));
    expect(servers).toEqual({ servers: { web: { url: 'https://mcp.example', headers: {} } } });
  });

  it('Scenario: a torn last line is not copied', async () => {
    const history = join(source.locations.memoryDir, 'chat-a', 'history.jsonl');
    await fs.appendFile(history, '{"role":"user","content":"half');
    const summary = await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    await restoreBackup(target.locations, { archive, force: false });
    const restored = await fs.readFile(join(target.locations.memoryDir, 'chat-a', 'history.jsonl'), 'utf8');
    expect(restored.endsWith('"cursor":2}\n')).toBe(true);
    expect(summary.manifest.files.find((f) => f.path === 'memory/chat-a/history.jsonl')?.kind).toBe('append-only');
  });

  it('Scenario: a tampered archive is refused naming the file', async () => {
    await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    const tampered = join(base, 'tampered.zip');
    await rewriteArchive(archive, tampered, (name, data) =>
      name === 'memory/chat-a/history.jsonl' ? Buffer.from(data.toString('utf8').replace('hello', 'HELLO')) : data,
    );
    const error = await restoreBackup(target.locations, { archive: tampered, force: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackupArchiveError);
    expect((error as BackupArchiveError).member).toBe('memory/chat-a/history.jsonl');
    expect((error as Error).message).toContain('SHA-256');
    expect(await listFiles(target.locations.dataDir)).toEqual([]);
  });

  it('Scenario: a truncated archive is refused', async () => {
    await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    const bytes = await fs.readFile(archive);
    const truncated = join(base, 'truncated.zip');
    await fs.writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expect(restoreBackup(target.locations, { archive: truncated, force: false })).rejects.toThrow(
      `the archive is truncated or is not a ZIP file: ${truncated}`,
    );
    // a member missing from the archive is named too
    const missing = join(base, 'missing.zip');
    await rewriteArchive(archive, missing, (name, data) => (name === 'memory/MEMORY.md' ? null : data));
    await expect(restoreBackup(target.locations, { archive: missing, force: false })).rejects.toThrow(
      'a file of the manifest is missing from the archive: memory/MEMORY.md',
    );
    expect(await listFiles(target.locations.dataDir)).toEqual([]);
  });

  describe('Scenario: hostile members are refused before anything is written', () => {
    /** An archive whose manifest lists one member `name` holding `content`, written with yazl under `placeholder`. */
    async function hostile(name: string, options: { mode?: number; listed?: boolean } = {}): Promise<string> {
      const content = Buffer.from('x');
      const placeholder = name.replace(/\.\./g, 'XX').replace(/^\//, 'Y');
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        format_version: BACKUP_FORMAT_VERSION,
        created_at: new Date().toISOString(),
        app_version: '0.1.0',
        data_format_version: 1,
        node_version: process.versions.node,
        secrets: false,
        files: options.listed === false ? [] : [{ path: name, size: 1, sha256: sha256(content), kind: 'file' }],
      };
      const zip = new ZipFile();
      zip.addBuffer(Buffer.from(JSON.stringify(manifest)), MANIFEST_MEMBER);
      zip.addBuffer(content, placeholder, options.mode !== undefined ? { mode: options.mode } : {});
      zip.end();
      const chunks: Buffer[] = [];
      for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
      // yazl refuses such names itself: write the placeholder, then put the real name's bytes in its place
      let bytes = Buffer.concat(chunks);
      if (placeholder !== name) {
        const from = Buffer.from(placeholder);
        const to = Buffer.from(name);
        let at = bytes.indexOf(from, 0);
        while (at >= 0) {
          to.copy(bytes, at);
          at = bytes.indexOf(from, at + 1);
        }
        bytes = Buffer.from(bytes);
      }
      const file = join(base, `hostile-${Math.random().toString(16).slice(2)}.zip`);
      await fs.writeFile(file, bytes);
      return file;
    }

    it.each([
      ['a path that climbs out', 'data/../../escape', 'the archive contains an illegal path: data/../../escape'],
      ['an absolute path', '/etc/cashcode-x', 'the archive contains an illegal path: /etc/cashcode-x'],
      ['a member outside the roots', 'other/file', 'the archive contains a member outside the backup roots: other/file'],
    ])('%s', async (_label, name, message) => {
      const file = await hostile(name);
      await expect(restoreBackup(target.locations, { archive: file, force: false })).rejects.toThrow(message);
      expect(await listFiles(target.locations.dataDir)).toEqual([]);
    });

    it('a symbolic link', async () => {
      const file = await hostile('data/link', { mode: 0o120777 });
      await expect(restoreBackup(target.locations, { archive: file, force: false })).rejects.toThrow(
        'the archive contains a symlink or special file: data/link',
      );
    });

    it('a member the manifest does not list', async () => {
      const file = await hostile('data/extra.json', { listed: false });
      await expect(restoreBackup(target.locations, { archive: file, force: false })).rejects.toThrow(
        'the archive contains a file the manifest does not list: data/extra.json',
      );
      expect(await listFiles(target.locations.dataDir)).toEqual([]);
    });
  });

  it('Scenario: a non-empty data directory is refused without --force', async () => {
    await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    await put(join(target.locations.memoryDir, 'old-chat', 'history.jsonl'), '{"role":"user","content":"old"}\n');
    const refused = await restoreBackup(target.locations, { archive, force: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RestoreRefusedError);
    expect((refused as Error).message).toContain(target.locations.dataDir);
    expect((refused as Error).message).toContain('--force');
    expect(await listFiles(target.locations.dataDir)).toEqual(['memory/old-chat/history.jsonl']);

    const result = await restoreBackup(target.locations, { archive, force: true });
    expect(result.keptAside).toHaveLength(1);
    const aside = result.keptAside[0] as string;
    expect(aside.startsWith(`${target.locations.dataDir}.before-restore-`)).toBe(true);
    expect(await fs.readFile(join(aside, 'memory', 'old-chat', 'history.jsonl'), 'utf8')).toContain('old');
    expect(await listFiles(target.locations.memoryDir)).toContain('chat-a/history.jsonl');
    expect(await listFiles(target.locations.memoryDir)).not.toContain('old-chat/history.jsonl');
  });

  it('keeps an existing settings file unless --force', async () => {
    await writeBackup(source.locations, { target: archive, includeSecrets: false, appVersion: '0.1.0' });
    await put(join(target.locations.settingsDir, 'llm.json'), '{"version":2,"mine":true}');
    const result = await restoreBackup(target.locations, { archive, force: false });
    expect(result.keptSettings).toEqual(['llm.json']);
    expect(await fs.readFile(join(target.locations.settingsDir, 'llm.json'), 'utf8')).toBe('{"version":2,"mine":true}');
  });
});
