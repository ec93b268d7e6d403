import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { createMemoryStores, type MemoryStores } from '../../memory/memory-stores';
import type { ToolContext } from '../agent-tool';
import { ToolInputError } from '../agent-tool';
import { SaveMemoryTool } from './save-memory.tool';

describe(SaveMemoryTool.name, () => {
  let dir: string;
  let tool: SaveMemoryTool;
  let stores: MemoryStores;
  const ctx = (): ToolContext => ({ chatId: 'c1', turnId: '0'.repeat(32), signal: new AbortController().signal });
  const memoryFile = () => fs.readFile(join(dir, 'MEMORY.md'), 'utf8');

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-save-memory-'));
    stores = createMemoryStores({ memoryDir: dir } as AppConfig, () => new Date(2026, 0, 2, 3, 4));
    tool = new SaveMemoryTool(stores.documents);
  });

  afterEach(async () => {
    await stores.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('describes one required string parameter and is not read-only', () => {
    expect(tool.name).toBe('save_memory');
    expect(tool.readOnly).toBe(false);
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['content'], properties: { content: { type: 'string' } } });
  });

  it('Scenario: a fact is saved as a dated line', async () => {
    expect(await tool.execute({ content: '  The user prefers metric units \n' }, ctx())).toBe(
      'Saved to long-term memory: The user prefers metric units',
    );
    expect(await memoryFile()).toBe('[2026-01-02 03:04] The user prefers metric units\n');
  });

  it('Scenario: empty content is refused and nothing is written', async () => {
    expect(await tool.execute({ content: '   ' }, ctx())).toBe('Content is empty; nothing saved.');
    await expect(fs.stat(join(dir, 'MEMORY.md'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Scenario: text already in long-term memory is not saved twice', async () => {
    await tool.execute({ content: 'Has a cat named Miso' }, ctx());
    expect(await tool.execute({ content: 'cat named Miso' }, ctx())).toBe(
      'This information is already in long-term memory.',
    );
    expect((await memoryFile()).split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('Scenario: concurrent calls both land in the file', async () => {
    const results = await Promise.all([
      tool.execute({ content: 'fact one' }, ctx()),
      tool.execute({ content: 'fact two' }, ctx()),
    ]);
    expect(results).toEqual(['Saved to long-term memory: fact one', 'Saved to long-term memory: fact two']);
    expect(await memoryFile()).toBe('[2026-01-02 03:04] fact one\n[2026-01-02 03:04] fact two\n');
  });

  it('rejects a missing or non-string content argument', async () => {
    await expect(tool.execute({}, ctx())).rejects.toBeInstanceOf(ToolInputError);
    await expect(tool.execute({ content: 42 }, ctx())).rejects.toBeInstanceOf(ToolInputError);
  });
});
