/**
 * The data directory's format at start (openspec backup "Requirement: Upgrades never lose data"), from
 * `test/fixtures/data-dir-format-0`: a data directory as CashCode wrote it before the format marker existed (two chats
 * with their metadata and cursors, MEMORY.md with a Dream run and its snapshot, a user Skill, tool policies, an MCP
 * server, the usage ledger; the derived session index, the logs and the lock left out). A server starts on a copy,
 * migrates it and reads everything; a marker from a newer version is refused with nothing changed.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import request from 'supertest';
import { CURRENT_DATA_FORMAT, DATA_FORMAT_FILE, DataFormatError } from '../src/backup/data-format';
import { startTestApp, type TestApp } from './support/test-app';

const FIXTURE = join(__dirname, 'fixtures', 'data-dir-format-0');

async function hashTree(dir: string, skip: RegExp): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (current: string): Promise<void> => {
    for (const entry of await fs.readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      const rel = relative(dir, path);
      if (skip.test(rel)) continue;
      if (entry.isDirectory()) await walk(path);
      else out[rel] = createHash('sha256').update(await fs.readFile(path)).digest('hex');
    }
  };
  await walk(dir);
  return out;
}

describe('data format (e2e)', () => {
  let dataDir: string;
  let t: TestApp | undefined;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-format-e2e-'));
    await fs.cp(FIXTURE, dataDir, { recursive: true });
  });

  afterEach(async () => {
    await t?.close();
    t = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('Scenario: a data directory of the previous layout is migrated and fully readable', async () => {
    await expect(fs.stat(join(dataDir, DATA_FORMAT_FILE))).rejects.toThrow();
    // the fixture's model calls are from December 2026: a long retention keeps them
    t = await startTestApp({ dataDir, env: { DREAM_INTERVAL: '0', CASHCODE_USAGE_RETENTION_DAYS: '3650' } });
    const marker = JSON.parse(await fs.readFile(join(dataDir, DATA_FORMAT_FILE), 'utf8'));
    expect(marker).toEqual({ format_version: CURRENT_DATA_FORMAT, written_by: expect.any(String) });
    const log = await fs.readFile(join(dataDir, 'logs', 'cashcode.log'), 'utf8');
    expect(log).toContain('data format 0 → 1');

    const sessions = (await request(t.httpUrl).get('/api/sessions').expect(200)).body as { sessions: Array<{ chat_id: string; title: string }> };
    expect(sessions.sessions.map((s) => s.chat_id).sort()).toEqual(['chat-a', 'chat-b']);
    const history = (await request(t.httpUrl).get('/api/sessions/chat-a/messages').expect(200)).body as { messages: Array<{ content: string }> };
    expect(history.messages.map((m) => m.content)).toEqual(['I live in Berlin', 'Noted: Berlin.']);
    const memory = (await request(t.httpUrl).get('/api/memory').expect(200)).body as { content: string };
    expect(memory.content).toBe('# Facts\n- likes tea\n- lives in Berlin\n');
    const dreams = (await request(t.httpUrl).get('/api/memory/dreams').expect(200)).body as { runs: unknown[] };
    expect(dreams.runs).toHaveLength(1);
    const skills = (await request(t.httpUrl).get('/api/skills').expect(200)).body as { items: Array<{ name: string; source: string }> };
    expect(skills.items.find((s) => s.name === 'tea')).toMatchObject({ source: 'user' });
    const policies = (await request(t.httpUrl).get('/api/settings/tool-policies').expect(200)).body as { defaults: Record<string, string> };
    expect(policies.defaults['exec']).toBe('allow');
    const servers = (await request(t.httpUrl).get('/api/mcp/servers').expect(200)).body as { servers: Array<{ name: string }> };
    expect(servers.servers.map((s) => s.name)).toContain('weather');
    const usage = (await request(t.httpUrl).get('/api/usage/records?from=2026-12-01&to=2026-12-31').expect(200)).body as { records: unknown[] };
    expect(usage.records.length).toBeGreaterThanOrEqual(2);

    // a second start finds the current format: nothing to migrate
    await t.close();
    t = await startTestApp({ dataDir, env: { DREAM_INTERVAL: '0' } });
    const logAgain = await fs.readFile(join(dataDir, 'logs', 'cashcode.log'), 'utf8');
    expect(logAgain.split('data format 0 → 1').length - 1).toBe(1);
  });

  it('Scenario: a data directory written by a newer version is refused', async () => {
    await fs.writeFile(join(dataDir, DATA_FORMAT_FILE), JSON.stringify({ format_version: CURRENT_DATA_FORMAT + 1, written_by: '99.0.0' }));
    // the test harness opens its log file before the start; the server itself would not
    const before = await hashTree(dataDir, /^logs/);
    const error = await startTestApp({ dataDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFormatError);
    expect((error as Error).message).toContain(`the data directory ${dataDir} was written by a newer CashCode (99.0.0`);
    expect(await hashTree(dataDir, /^logs/)).toEqual(before);
    const names = (await fs.readdir(dataDir)).filter((n) => n !== 'logs').sort();
    expect(names).toEqual(['.cashcode-format.json', 'approvals', 'mcp', 'memory', 'skills', 'usage']);
  });
});
