/**
 * Backups through the real app (openspec backup): `POST /api/backup` with chats, memory, a Dream snapshot, a Skill,
 * approvals, MCP servers, usage and LLM settings; secrets left out unless asked for; one backup at a time; a backup
 * while a turn streams and a Dream waits for the model; the restore round trip into empty directories, byte for byte,
 * read back by a server started on them.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { BACKUP_HEADERS } from '@cashcode/contracts';
import { openBackupArchive } from '../src/backup/backup-archive-reader';
import type { BackupManifest } from '../src/backup/backup-format';
import { restoreBackup } from '../src/backup/backup-restore';
import { backupLocations } from '../src/backup/backup-sources';
import { openSqlite } from '../src/common/sqlite';
import { DREAM_ANALYSIS_PROMPT, DREAM_EDITOR_PROMPT } from '../src/memory/dream-batch';
import { FakeModelServer, type FakeStep, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, putToolPolicies, WsTestClient } from './support/ws-client';

const KEY = 'sk-test-fake-key-0123456789';
const MCP_SECRET = 'Bearer mcp-secret-value-42';
const systemOf = (r: RecordedRequest) => (r.body as { messages: Array<{ content: string | null }> }).messages[0]?.content;

interface Downloaded {
  file: string;
  headers: Headers;
  manifest: BackupManifest;
  /** member path → bytes */
  members: Map<string, Buffer>;
}

describe('backup (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let work: string;
  let analysisSteps: FakeStep[];
  let editorSteps: FakeStep[];

  beforeAll(async () => {
    fake = await FakeModelServer.start();
  });

  afterAll(async () => {
    await fake.close();
  });

  beforeEach(async () => {
    fake.reset();
    analysisSteps = [];
    editorSteps = [];
    fake.setHandler((r) => {
      if (systemOf(r) === DREAM_ANALYSIS_PROMPT) return analysisSteps.shift() ?? { content: 'No changes' };
      if (systemOf(r) === DREAM_EDITOR_PROMPT) return editorSteps.shift() ?? { content: '' };
      return undefined;
    });
    work = await fs.mkdtemp(join(tmpdir(), 'cashcode-backup-e2e-'));
    t = await startTestApp({ env: { DREAM_INTERVAL: '0' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client?.close();
    await t?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  async function turn(chatId: string, content: string, answer: string): Promise<void> {
    fake.enqueue({ content: answer });
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, content);
    await done;
  }

  /** Chats, memory and a Dream snapshot, a Skill, approvals, an MCP server with a secret header, usage. */
  async function populate(): Promise<void> {
    await turn('chat-a', 'I live in Berlin', 'Noted: Berlin.');
    await turn('chat-b', 'I like tea', 'Tea it is.');
    const memory = await request(t.httpUrl).get('/api/memory').expect(200);
    await request(t.httpUrl).put('/api/memory').send({ content: '# Facts\n- likes tea\n', hash: memory.body.hash }).expect(200);
    analysisSteps.push({ content: '## New facts\n- lives in Berlin' });
    editorSteps.push({ content: '# Facts\n- likes tea\n- lives in Berlin\n' });
    expect((await request(t.httpUrl).post('/api/memory/dream').expect(200)).body.ran).toBe(true);
    await request(t.httpUrl)
      .post('/api/skills')
      .send({ name: 'tea', content: '---\nname: tea\ndescription: Brew tea well.\n---\n\nUse 80 °C water.\n' })
      .expect(201);
    await putToolPolicies(t.httpUrl, { defaults: { exec: 'allow' } });
    await request(t.httpUrl)
      .post('/api/mcp/servers')
      .send({ name: 'weather', display_name: 'Weather', url: 'http://127.0.0.1:9/sse', headers: { Authorization: MCP_SECRET } })
      .expect(201);
  }

  async function download(body: Record<string, unknown> = {}): Promise<Downloaded> {
    const response = await fetch(`${t.httpUrl}/api/backup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const file = join(work, `backup-${Math.random().toString(16).slice(2)}.zip`);
    await fs.writeFile(file, Buffer.from(await response.arrayBuffer()));
    const open = await openBackupArchive(file);
    const members = new Map<string, Buffer>();
    try {
      for (const [path, entry] of open.entries) {
        const chunks: Buffer[] = [];
        for await (const chunk of (await open.zip.openReadStreamPromise(entry)) as AsyncIterable<Buffer>) chunks.push(chunk);
        members.set(path, Buffer.concat(chunks));
      }
    } finally {
      open.zip.close();
    }
    return { file, headers: response.headers, manifest: open.manifest, members };
  }

  it('Scenario: a backup holds every chat, memory document, Skill and setting', async () => {
    await populate();
    const backup = await download();
    expect(backup.headers.get('content-type')).toBe('application/zip');
    expect(backup.headers.get('content-disposition')).toMatch(/^attachment; filename="cashcode-backup-\d{8}-\d{6}\.zip"$/);
    expect(backup.headers.get(BACKUP_HEADERS.files)).toBe(String(backup.manifest.files.length));
    const paths = backup.manifest.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'memory/chat-a/history.jsonl',
        'memory/chat-a/metadata.json',
        'memory/chat-b/history.jsonl',
        'memory/MEMORY.md',
        'memory/.dream_cursor',
        'memory/.dreams/runs.jsonl',
        'data/skills/user/tea/SKILL.md',
        'data/approvals/tool-policies.json',
        'data/mcp/servers.json',
        'data/usage/ledger.sqlite',
        'data/.cashcode-format.json',
        'config/settings/llm.json',
      ]),
    );
    expect(paths.some((p) => p.startsWith('memory/.dreams/snapshots/'))).toBe(true);
    expect(paths.some((p) => p.includes('memory-index') || p.startsWith('data/logs/') || p.includes('.cashcode.lock'))).toBe(false);
    for (const file of backup.manifest.files) {
      const bytes = backup.members.get(file.path) as Buffer;
      expect(bytes.length).toBe(file.size);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
    }
    const history = (backup.members.get('memory/chat-a/history.jsonl') as Buffer).toString('utf8');
    expect(history).toContain('I live in Berlin');
    expect(history).toBe(await fs.readFile(join(t.config.memoryDir, 'chat-a', 'history.jsonl'), 'utf8'));
  });

  it('Scenario: secrets are left out unless asked for', async () => {
    await populate();
    const plain = await download();
    expect(plain.headers.get(BACKUP_HEADERS.secrets)).toBe('false');
    expect(plain.manifest.secrets).toBe(false);
    const llm = (plain.members.get('config/settings/llm.json') as Buffer).toString('utf8');
    expect(llm).toContain(fake.baseUrl);
    expect(llm).not.toContain(KEY);
    expect(llm).not.toContain('api_key');
    expect(plain.manifest.files.find((f) => f.path === 'config/settings/llm.json')?.kind).toBe('redacted');
    expect((plain.members.get('data/mcp/servers.json') as Buffer).toString('utf8')).not.toContain(MCP_SECRET);
    expect(plain.members.has('config/settings/api-token')).toBe(false);

    const full = await download({ include_secrets: true });
    expect(full.headers.get(BACKUP_HEADERS.secrets)).toBe('true');
    expect((full.members.get('config/settings/llm.json') as Buffer).toString('utf8')).toContain(KEY);
    expect((full.members.get('data/mcp/servers.json') as Buffer).toString('utf8')).toContain(MCP_SECRET);

    const bad = await request(t.httpUrl).post('/api/backup').send({ include_secrets: 'yes' }).expect(422);
    expect(bad.headers['content-type']).toContain('application/problem+json');
  });

  it('Scenario: one backup at a time', async () => {
    // enough bytes that the first backup is still being written when the second arrives
    await fs.mkdir(join(t.config.workspaceDir, 'attachments', 'chat-a'), { recursive: true });
    await fs.writeFile(join(t.config.workspaceDir, 'attachments', 'chat-a', 'big.bin'), Buffer.alloc(24 * 1024 * 1024, 7));
    const [first, second] = await Promise.all([
      request(t.httpUrl).post('/api/backup').send({}),
      new Promise((resolve) => setTimeout(resolve, 20)).then(() => request(t.httpUrl).post('/api/backup').send({})),
    ]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'backup_running', status: 409 });
    // the work folder is gone once the download is done
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await fs.readdir(join(t.dataDir, '.backup-tmp')).catch(() => [])).toEqual([]);
  });

  it('Scenario: a backup during a running turn and a Dream', async () => {
    await turn('chat-a', 'I live in Berlin', 'Noted.');
    // a turn that streams for about two seconds, and a Dream whose analysis answers after 1.5 s
    fake.enqueue({ chunks: Array.from({ length: 20 }, (_, i) => `part ${i} `), chunkDelayMs: 100 });
    analysisSteps.push({ content: '## New facts\n- lives in Berlin', delayMs: 1500 });
    editorSteps.push({ content: '# Facts\n- lives in Berlin\n' });
    const done = client.next('done', (e) => e.chat_id === 'chat-b', 15_000);
    client.sendMessage('chat-b', 'Tell me a long story');
    await client.next('delta', (e) => e.chat_id === 'chat-b');
    let finished = 0;
    void done.then(() => (finished += 1));
    const dreamDone = request(t.httpUrl)
      .post('/api/memory/dream')
      .then((r) => {
        finished += 1;
        return r;
      });
    // the first turn, the streaming turn and the Dream's analysis: all three requests are in
    await fake.waitForRequests(3);

    const backup = await download();
    expect(finished).toBe(0); // the turn and the Dream were still running while the backup was taken
    for (const file of backup.manifest.files.filter((f) => f.kind === 'append-only')) {
      const text = (backup.members.get(file.path) as Buffer).toString('utf8');
      if (text !== '') expect(text.endsWith('\n')).toBe(true);
      for (const line of text.split('\n').filter((l) => l !== '')) expect(() => JSON.parse(line)).not.toThrow();
    }
    const ledger = join(work, 'ledger.sqlite');
    await fs.writeFile(ledger, backup.members.get('data/usage/ledger.sqlite') as Buffer);
    const db = openSqlite(ledger);
    expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    db.close();

    expect((await done).event).toBe('done');
    expect((await dreamDone).status).toBe(200);
    expect(await fs.readFile(join(t.config.memoryDir, 'MEMORY.md'), 'utf8')).toContain('lives in Berlin');
  });

  it('Scenario: a restore round trip gives back every file byte for byte', async () => {
    await populate();
    const sessions = (await request(t.httpUrl).get('/api/sessions').expect(200)).body;
    const memory = (await request(t.httpUrl).get('/api/memory').expect(200)).body;
    const skills = (await request(t.httpUrl).get('/api/skills').expect(200)).body;
    const llm = (await request(t.httpUrl).get('/api/settings/llm').expect(200)).body;
    const policies = (await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body;
    const usage = (await request(t.httpUrl).get('/api/usage/records').expect(200)).body;
    const backup = await download({ include_secrets: true });
    const source = t.config;
    await client.close();
    await t.close();

    const dataDir = join(work, 'restored-data');
    const configDir = join(work, 'restored-config');
    const locations = backupLocations({
      dataDir,
      memoryDir: join(dataDir, 'memory'),
      workspaceDir: join(dataDir, 'workspace'),
      logDir: join(dataDir, 'logs'),
      configDir,
    });
    const result = await restoreBackup(locations, { archive: backup.file, force: false });
    expect(result.files).toBe(backup.manifest.files.length);
    // t.close() removed the source directories: compare with the archived bytes, then with what a server reads
    for (const file of backup.manifest.files) {
      const [root, ...rest] = file.path.split('/');
      const base = { data: dataDir, memory: locations.memoryDir, attachments: locations.attachmentsDir, config: configDir }[root as string] as string;
      const restored = await fs.readFile(join(base, ...rest));
      expect(restored.equals(backup.members.get(file.path) as Buffer)).toBe(true);
    }
    expect(source.dataDir).not.toBe(dataDir);

    t = await startTestApp({ dataDir, configDir, env: { DREAM_INTERVAL: '0' } });
    client = await WsTestClient.connect(t.wsUrl);
    expect((await request(t.httpUrl).get('/api/sessions').expect(200)).body).toEqual(sessions);
    expect((await request(t.httpUrl).get('/api/memory').expect(200)).body).toEqual(memory);
    expect((await request(t.httpUrl).get('/api/skills').expect(200)).body).toEqual(skills);
    expect((await request(t.httpUrl).get('/api/settings/llm').expect(200)).body).toEqual(llm);
    expect((await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body).toEqual(policies);
    expect((await request(t.httpUrl).get('/api/usage/records').expect(200)).body).toEqual(usage);
    // the restored chat goes on
    await turn('chat-a', 'Still there?', 'Yes.');
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(configDir, { recursive: true, force: true });
  });
});
