import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { addedLines, MemoryDocuments } from './memory-documents';
import { PROVENANCE_FILE } from './memory-provenance';

const FIXED_NOW = new Date(2026, 6, 26, 12, 5, 30);

describe('memory provenance', () => {
  let dir: string;
  let documents: MemoryDocuments;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-provenance-'));
    documents = new MemoryDocuments({ memoryDir: dir } as AppConfig, () => FIXED_NOW);
  });

  afterEach(async () => {
    await documents.onApplicationShutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: a saved fact records its chat, turn and requester with no untrusted sources', async () => {
    await documents.saveLongTermMemory('Prefers tea', {
      origin: 'save_memory',
      requested_by: 'owner',
      chat_id: 'c1',
      turn_id: 't1',
      untrusted_sources: [],
    });
    const page = await documents.provenance.list(0, 10);
    expect(page).toMatchObject({ total: 1, unreadable: 0 });
    expect(page.records[0]).toMatchObject({
      origin: 'save_memory',
      requested_by: 'owner',
      chat_id: 'c1',
      turn_id: 't1',
      entry: '[2026-07-26 12:05] Prefers tea',
      untrusted_sources: [],
    });
    expect((await fs.stat(join(dir, PROVENANCE_FILE))).mode & 0o777).toBe(0o600);
    // MEMORY.md stays plain Markdown
    expect(await fs.readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe('[2026-07-26 12:05] Prefers tea\n');
  });

  it('a duplicate or a save without provenance records nothing', async () => {
    await documents.saveLongTermMemory('Prefers tea');
    await documents.saveLongTermMemory('Prefers tea', { origin: 'save_memory', requested_by: 'owner', untrusted_sources: [] });
    expect((await documents.provenance.list(0, 10)).total).toBe(0);
  });

  it('Scenario: a console edit records each added line as the owner\'s', async () => {
    await fs.writeFile(join(dir, 'MEMORY.md'), '# Facts\n- a\n- b\n');
    await documents.updateDocument('MEMORY.md', () => ({ content: '# Facts\n- a\n- b\n- c\n\n- d\n', result: null }), {
      provenance: { origin: 'console', requested_by: 'owner', untrusted_sources: [] },
    });
    const page = await documents.provenance.list(0, 10);
    expect(page.records.map((record) => [record.origin, record.requested_by, record.entry])).toEqual([
      ['console', 'owner', '- c'],
      ['console', 'owner', '- d'],
    ]);
  });

  it('Scenario: a corrupted provenance log keeps memory readable and records new entries', async () => {
    await fs.writeFile(join(dir, PROVENANCE_FILE), '{"at": "x", "origin": "dream"}\n{"torn": \n');
    await documents.saveLongTermMemory('Has a cat', { origin: 'save_memory', requested_by: 'api', untrusted_sources: [] });
    expect(await documents.readLongTermMemory()).toContain('Has a cat');
    const page = await documents.provenance.list(0, 10);
    expect(page.unreadable).toBe(2);
    expect(page.records.map((record) => record.requested_by)).toEqual(['api']);
  });

  it('pages oldest first', async () => {
    for (const fact of ['one', 'two', 'three']) {
      await documents.saveLongTermMemory(fact, { origin: 'save_memory', requested_by: 'owner', untrusted_sources: [] });
    }
    const page = await documents.provenance.list(1, 1);
    expect(page).toMatchObject({ total: 3, offset: 1, limit: 1 });
    expect(page.records.map((record) => record.entry)).toEqual(['[2026-07-26 12:05] two']);
  });

  it('addedLines lists the new non-blank lines only', () => {
    expect(addedLines('a\nb\n', 'b\nc\n\n a \nd')).toEqual(['c', 'd']);
  });
});
