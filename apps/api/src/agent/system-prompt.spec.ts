import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config';
import type { MemoryDocuments } from '../memory/memory-documents';
import { createMemoryStores } from '../memory/memory-stores';
import { REMEMBERED_INFORMATION_HEADING, SystemPromptBuilder } from './system-prompt';

describe('SystemPromptBuilder snapshots', () => {
  let dir: string;
  let memory: MemoryDocuments;
  let prompt: SystemPromptBuilder;
  let memoryFile: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-prompt-'));
    const config = loadConfig({ CASHCODE_DATA_DIR: join(dir, 'data') }, dir);
    memory = createMemoryStores(config).documents;
    prompt = new SystemPromptBuilder(memory);
    prompt.registerSection({ name: 'test.static', order: 1, render: () => '## Static section' });
    await fs.mkdir(config.memoryDir, { recursive: true });
    memoryFile = join(config.memoryDir, 'MEMORY.md');
    await fs.writeFile(memoryFile, '- The user lives in Berlin\n');
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the system prompt of a chat has the same bytes from turn to turn', async () => {
    const first = await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' });
    expect(first).toContain(`${REMEMBERED_INFORMATION_HEADING}- The user lives in Berlin\n\n## Static section`);
    for (let turn = 0; turn < 5; turn++) expect(await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' })).toBe(first);
  });

  it('Scenario: a Dream rewrite of MEMORY.md reaches a running chat only at its next context boundary', async () => {
    const before = await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' });
    // a Dream rewrite goes through updateDocument with `deferred`
    await memory.updateDocument('MEMORY.md', () => ({ content: '- The user lives in Lyon\n', result: null }), { deferred: true });
    expect(await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' })).toBe(before);
    // a new chat, the next boundary of the running chat, and a stateless prompt see the new file
    expect(await prompt.build({ chatId: 'chat-b', boundary: '0|user:1:q' })).toContain('Lyon');
    expect(await prompt.build({ chatId: 'chat-a', boundary: '1|user:1:q' })).toContain('Lyon');
    expect(await prompt.build({ chatId: 'chat-c' })).toContain('Lyon');
    // an edit outside CashCode also waits for the boundary
    await fs.writeFile(memoryFile, '- The user lives in Paris\n');
    expect(await prompt.build({ chatId: 'chat-a', boundary: '1|user:1:q' })).toContain('Lyon');
  });

  it('Scenario: a deliberate MEMORY.md edit reaches every chat at its next turn', async () => {
    const before = await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' });
    expect(await memory.saveLongTermMemory('The user prefers tea')).toBe('saved');
    // a saved fact waits for the running chat's next boundary; a new chat has it at once
    expect(await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' })).toBe(before);
    expect(await prompt.build({ chatId: 'chat-b', boundary: '0|user:1:q' })).toMatch(
      /\[\d{4}-\d\d-\d\d \d\d:\d\d\] The user prefers tea\n\n## Static section$/,
    );
    expect(await prompt.build({ chatId: 'chat-a', boundary: '1|user:1:q' })).toContain('The user prefers tea');
    await memory.updateDocument('MEMORY.md', () => ({ content: '- Edited in the console\n', result: null }));
    expect(await prompt.build({ chatId: 'chat-a', boundary: '0|user:1:q' })).toContain('- Edited in the console');
  });
});
