import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { DEFAULT_SOUL, MemoryDocuments } from './memory-documents';

const FIXED_NOW = new Date(2026, 6, 26, 12, 5, 30);

describe(MemoryDocuments.name, () => {
  let dir: string;
  let documents: MemoryDocuments;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-memory-'));
    documents = new MemoryDocuments({ memoryDir: dir } as AppConfig, () => FIXED_NOW);
  });

  afterEach(async () => {
    await documents.onApplicationShutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the built-in persona is used when SOUL.md is missing or blank', async () => {
    expect(await documents.readSoul()).toBe(DEFAULT_SOUL);
    expect(DEFAULT_SOUL.startsWith('You are CashCode, a capable local-first AI assistant with persistent memory.')).toBe(true);
    expect(DEFAULT_SOUL).toContain('## Tool rules');
    expect(DEFAULT_SOUL).toContain('save_memory');
    await fs.writeFile(join(dir, 'SOUL.md'), '  \n');
    expect(await documents.readSoul()).toBe(DEFAULT_SOUL);
    await fs.writeFile(join(dir, 'SOUL.md'), 'You are Penny.\n');
    expect(await documents.readSoul()).toBe('You are Penny.');
  });

  it('Scenario: long-term memory lines are dated, de-duplicated and end with a newline', async () => {
    expect(await documents.readLongTermMemory()).toBe('');
    await fs.writeFile(join(dir, 'MEMORY.md'), '# Facts\n\n\n');
    expect(await documents.saveLongTermMemory('Likes tea')).toBe('saved');
    expect(await documents.saveLongTermMemory('tea')).toBe('duplicate');
    expect(await documents.saveLongTermMemory('Lives in Lyon')).toBe('saved');
    expect(await fs.readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe(
      '# Facts\n[2026-07-26 12:05] Likes tea\n[2026-07-26 12:05] Lives in Lyon\n',
    );
    expect(await documents.readLongTermMemory()).toBe('# Facts\n[2026-07-26 12:05] Likes tea\n[2026-07-26 12:05] Lives in Lyon');
  });

  it('Scenario: concurrent saves are serialised and none is lost', async () => {
    const results = await Promise.all(
      ['a1', 'b2', 'c3', 'a1', 'd4'].map((fact) => documents.saveLongTermMemory(`fact ${fact}`)),
    );
    expect(results).toEqual(['saved', 'saved', 'saved', 'duplicate', 'saved']);
    const lines = (await fs.readFile(join(dir, 'MEMORY.md'), 'utf8')).trimEnd().split('\n');
    expect(lines).toEqual(['a1', 'b2', 'c3', 'd4'].map((f) => `[2026-07-26 12:05] fact ${f}`));
  });
});
