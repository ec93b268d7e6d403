/**
 * Private files: everything the server creates under its data, memory, log and config directories is owner-only
 * (directories 0700, files 0600) whatever the umask, including files the tools create in the workspace; what an
 * earlier version left readable is tightened at boot with one log line, without following symbolic links and without
 * walking the workspace.
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { LOG_FILE_NAME } from '../src/common/app-logger';
import { LOCK_FILE_NAME } from '../src/common/data-dir-lock';
import { FakeModelServer } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { skillMd } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

// A turn with tools, a Dream, Skill edits and an MCP stdio connection on a loaded 2-core runner.
jest.setTimeout(90_000);

interface Entry {
  path: string;
  kind: 'dir' | 'file' | 'symlink';
  mode: number;
}

/** Every entry under `root` (lstat: links are listed, never followed). */
async function walk(root: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    const stat = await fs.lstat(current);
    const kind = stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'dir' : 'file';
    out.push({ path: current, kind, mode: stat.mode & 0o777 });
    if (kind === 'dir') for (const name of await fs.readdir(current)) pending.push(join(current, name));
  }
  return out;
}

const octal = (mode: number) => `0${mode.toString(8)}`;

/** `path mode` of every directory that is not 0700 and every file that is not 0600 (links are not checked). */
async function notPrivate(roots: string[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const root of roots) {
    for (const entry of await walk(root)) {
      if (entry.kind === 'dir' && entry.mode !== 0o700) wrong.push(`${entry.path} ${octal(entry.mode)}`);
      if (entry.kind === 'file' && entry.mode !== 0o600) wrong.push(`${entry.path} ${octal(entry.mode)}`);
    }
  }
  return wrong;
}

async function readLog(t: TestApp, wanted: RegExp): Promise<string> {
  const file = join(t.config.logDir, LOG_FILE_NAME);
  // the file transport writes asynchronously: poll until the wanted line is there (bounded)
  for (let i = 0; i < 100; i++) {
    const text = existsSync(file) ? await fs.readFile(file, 'utf8') : '';
    if (wanted.test(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return existsSync(file) ? fs.readFile(file, 'utf8') : '';
}

describe('private files (e2e)', () => {
  let previousUmask: number;

  beforeAll(() => {
    // the usual desktop umask: without explicit modes everything would be 0755 / 0644
    previousUmask = process.umask(0o022);
  });

  afterAll(() => {
    process.umask(previousUmask);
  });

  describe('what the server writes', () => {
    let fake: FakeModelServer;
    let t: TestApp;
    let client: WsTestClient;
    let catalogDir: string;

    beforeAll(async () => {
      ensureMcpServersBuilt();
      fake = await FakeModelServer.start();
      catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-mcp-catalog-'));
      const catalog = writeCatalog(catalogDir, { stdio: stdioEntry() });
      t = await startTestApp({ env: { DREAM_INTERVAL: '0', CASHCODE_MCP_CATALOG: catalog } });
      await configureFakeModel(t.httpUrl, fake.baseUrl);
      client = await WsTestClient.connect(t.wsUrl);
    });

    afterAll(async () => {
      await client?.close();
      await t?.close();
      await fake?.close();
      if (catalogDir) await fs.rm(catalogDir, { recursive: true, force: true });
    });

    it('Scenario: with umask 022 every folder the server creates is 0700 and every file 0600', async () => {
      // a turn over WebSocket with tools: history.jsonl, metadata.json, .cursor, MEMORY.md, a workspace file, logs
      const chatId = 'private-chat';
      fake.enqueue(
        {
          toolCalls: [
            {
              id: 'w1',
              name: 'write_file',
              arguments: JSON.stringify({ path: 'notes/deep/todo.md', content: 'buy milk\n' }),
            },
            { id: 's1', name: 'save_memory', arguments: JSON.stringify({ content: 'The user likes tea' }) },
          ],
        },
        { content: 'Done.' },
      );
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'note this');
      await done;
      const sessions = await request(t.httpUrl).get('/api/sessions').expect(200);
      expect(JSON.stringify(sessions.body)).toContain(chatId);

      // a Dream run with a snapshot of MEMORY.md
      fake.setHandler(() => ({ content: '# Personal\n- The user likes tea\n- The user keeps notes' }));
      const dream = await request(t.httpUrl).post('/api/memory/dream').expect(200);
      expect(dream.body.ran).toBe(true);
      fake.setHandler(() => undefined);

      // REST edits of SOUL.md, a Skill created and replaced (a version snapshot)
      const soul = await request(t.httpUrl).get('/api/memory/soul').expect(200);
      await request(t.httpUrl).put('/api/memory/soul').send({ content: '# Soul\n', hash: soul.body.hash }).expect(200);
      await request(t.httpUrl)
        .post('/api/skills')
        .send({ name: 'private-skill', content: skillMd('private-skill'), support_files: { 'references/a.md': 'a' } })
        .expect(201);
      await request(t.httpUrl)
        .put('/api/skills/private-skill')
        .send({ content: skillMd('private-skill', { description: 'second version' }) })
        .expect(200);

      // an MCP connection writes the tool-schema cache; a user MCP entry writes the user catalog
      const connected = await request(t.httpUrl).post('/api/mcp/servers/stdio/connect').expect(200);
      expect(connected.body.connected).toBe(true);
      await request(t.httpUrl).post('/api/mcp/servers').send({ name: 'remote', display_name: 'Remote', url: 'http://127.0.0.1:9/mcp' }).expect(201);
      await request(t.httpUrl).post('/api/mcp/servers/stdio/disconnect').expect(200);

      // everything the scenario should have produced is there (the check below cannot pass on an empty tree)
      const files = (await walk(t.dataDir)).filter((e) => e.kind === 'file').map((e) => e.path);
      const expected = [
        /memory\/private-chat\/history\.jsonl$/,
        /memory\/private-chat\/metadata\.json$/,
        /memory\/MEMORY\.md$/,
        /memory\/SOUL\.md$/,
        /memory\/\.dreams\/runs\.jsonl$/,
        /memory\/\.dreams\/snapshots\/[^/]+\.md$/,
        /workspace\/notes\/deep\/todo\.md$/,
        /skills\/user\/private-skill\/SKILL\.md$/,
        /skills\/user\/private-skill\/references\/a\.md$/,
        /skill-snapshots\/user\/private-skill\/[^/]+\/SKILL\.md$/,
        /mcp_cache\/stdio\.json$/,
        /mcp\/servers\.json$/,
        /logs\/cashcode\.log\.\d{4}-\d{2}-\d{2}$/,
      ];
      for (const pattern of expected) expect(files.some((file) => pattern.test(file)) ? pattern : files).toBe(pattern);
      expect((await walk(t.configDir)).some((e) => e.kind === 'file')).toBe(true);

      // the lock file is created by data-dir-lock.ts, which makes it owner-only itself
      const wrong = await notPrivate([t.dataDir, t.configDir]);
      expect(wrong.filter((line) => !line.startsWith(`${join(t.dataDir, LOCK_FILE_NAME)} `))).toEqual([]);
    });
  });

  describe('boot tightening', () => {
    const made: string[] = [];

    afterAll(async () => {
      for (const dir of made) await fs.rm(dir, { recursive: true, force: true });
    });

    it('Scenario: an existing data dir with 0755 folders and 0644 files is tightened at boot, with one log line', async () => {
      const dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-data-'));
      const configDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-config-'));
      const outside = await fs.mkdtemp(join(tmpdir(), 'cashcode-outside-'));
      made.push(dataDir, configDir, outside);
      // what an earlier version left behind
      const chat = join(dataDir, 'memory', 'old-chat');
      await fs.mkdir(chat, { recursive: true });
      await fs.mkdir(join(dataDir, 'skills', 'user', 'old-skill'), { recursive: true });
      await fs.mkdir(join(dataDir, 'workspace', 'project'), { recursive: true });
      const legacyFiles = [
        join(chat, 'history.jsonl'),
        join(chat, 'metadata.json'),
        join(dataDir, 'memory', 'MEMORY.md'),
        join(dataDir, 'skills', 'user', 'old-skill', 'SKILL.md'),
        join(configDir, 'llm_settings.json'),
      ];
      for (const file of legacyFiles) await fs.writeFile(file, '{}\n', { mode: 0o644 });
      const script = join(dataDir, 'skills', 'user', 'old-skill', 'run.sh');
      await fs.writeFile(script, '#!/bin/sh\n', { mode: 0o755 });
      // the workspace is the user's: never walked
      const workspaceFile = join(dataDir, 'workspace', 'project', 'README.md');
      await fs.writeFile(workspaceFile, 'mine\n', { mode: 0o644 });
      // a link to a file outside: neither followed nor changed
      const target = join(outside, 'shared.txt');
      await fs.writeFile(target, 'shared\n', { mode: 0o644 });
      await fs.symlink(target, join(dataDir, 'memory', 'link-to-outside'));
      const legacyDirs = [dataDir, join(dataDir, 'memory'), chat, configDir];
      for (const dir of [...legacyDirs, join(dataDir, 'skills'), join(dataDir, 'skills', 'user')]) {
        await fs.chmod(dir, 0o755);
      }
      await fs.chmod(join(dataDir, 'skills', 'user', 'old-skill'), 0o755);
      await fs.chmod(join(dataDir, 'workspace'), 0o755);
      await fs.chmod(join(dataDir, 'workspace', 'project'), 0o755);
      for (const file of legacyFiles) await fs.chmod(file, 0o644);

      const t = await startTestApp({ dataDir, configDir });
      try {
        const log = await readLog(t, /Tightened permissions of \d+ paths under/);
        const dataLines = log.split('\n').filter((line) => line.includes(`Tightened permissions of`) && line.includes(dataDir));
        expect(dataLines).toHaveLength(1);
        // 6 folders (data, memory, old-chat, skills, user, old-skill; not the workspace) + 5 files
        expect(dataLines[0]).toContain(`event=fs.permissions.tightened paths=11 root=${JSON.stringify(dataDir)}`);
        expect(dataLines[0]).toContain(`Tightened permissions of 11 paths under ${dataDir} to owner-only`);
        const configLines = log.split('\n').filter((line) => line.includes(`Tightened permissions of 2 paths under ${configDir}`));
        expect(configLines).toHaveLength(1);

        for (const dir of legacyDirs) expect(octal((await fs.stat(dir)).mode & 0o777)).toBe('0700');
        for (const file of legacyFiles) expect(octal((await fs.stat(file)).mode & 0o777)).toBe('0600');
        // owner bits are kept: a script stays executable for its owner
        expect(octal((await fs.stat(script)).mode & 0o777)).toBe('0700');
        expect(octal((await fs.stat(workspaceFile)).mode & 0o777)).toBe('0644');
        expect(octal((await fs.stat(join(dataDir, 'workspace', 'project'))).mode & 0o777)).toBe('0755');
        expect(octal((await fs.stat(target)).mode & 0o777)).toBe('0644');
        await request(t.httpUrl).get('/api/health').expect(200);
      } finally {
        await t.close();
      }

      // a second boot finds nothing to tighten: no line
      const again = await startTestApp({ dataDir, configDir });
      try {
        await request(again.httpUrl).get('/api/health').expect(200);
        await readLog(again, /event=server\.started/);
        const log = await fs.readFile(join(again.config.logDir, LOG_FILE_NAME), 'utf8');
        expect(log.match(/Tightened permissions of/g)).toHaveLength(2);
      } finally {
        await again.close();
      }
    });
  });
});
