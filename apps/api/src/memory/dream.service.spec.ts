import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AppEventBus } from '../events/event-bus';
import type { LlmSelection } from '@cashcode/contracts';
import type { AppConfig } from '../config/app-config';
import type { LlmClientProvider } from '../llm-settings/llm-provider';
import type { BackgroundCompletion, BackgroundModel } from './background-model';
import { BackgroundModelError } from './background-model';
import { advancedCursors, DREAM_ANALYSIS_PROMPT, DREAM_EDITOR_PROMPT, dropsTooMuch, normaliseMemoryOutput } from './dream-batch';
import { DreamService } from './dream.service';
import { DreamStore } from './dream-store';
import { createMemoryStores, type MemoryStores } from './memory-stores';
import type { HistoryRecord } from './memory.types';

const NOW = new Date(2026, 6, 26, 12, 0);

type Answer = (request: BackgroundCompletion) => Promise<string>;

class ScriptedModel {
  readonly requests: BackgroundCompletion[] = [];
  private readonly answers: Answer[] = [];

  script(...answers: Array<string | Answer>): void {
    this.answers.push(...answers.map((a) => (typeof a === 'string' ? async () => a : a)));
  }

  async complete(request: BackgroundCompletion): Promise<string> {
    this.requests.push(request);
    const answer = this.answers.shift();
    if (!answer) throw new Error('unexpected model call');
    return answer(request);
  }
}

class FakeLlm implements LlmClientProvider {
  background: LlmSelection | null = null;
  last: LlmSelection | null = { provider: 'openai_compatible', model: 'turn-model' };
  ready = new Set(['openai_compatible']);
  acquire(): never {
    throw new Error('not used');
  }
  rememberSelection(selection: LlmSelection): void {
    this.last = selection;
  }
  lastSelection(): LlmSelection | null {
    return this.last;
  }
  backgroundSelection(): LlmSelection | null {
    return this.background;
  }
  isReady(provider: string): boolean {
    return this.ready.has(provider);
  }
}

describe(DreamService.name, () => {
  let dir: string;
  let memory: MemoryStores;
  let dreamStore: DreamStore;
  let model: ScriptedModel;
  let llm: FakeLlm;
  let service: DreamService;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-dream-'));
    const config = { memoryDir: dir, backgroundModelTimeoutMs: 1000 } as AppConfig;
    memory = createMemoryStores(config, () => NOW);
    dreamStore = new DreamStore(config);
    model = new ScriptedModel();
    llm = new FakeLlm();
    service = new DreamService(config, memory.documents, memory.chats, memory.reader, dreamStore, model as unknown as BackgroundModel, llm, new AppEventBus(new EventEmitter2()), () => NOW);
  });

  afterEach(async () => {
    await memory.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const memoryFile = () => fs.readFile(join(dir, 'MEMORY.md'), 'utf8');
  const cursorFile = async () => JSON.parse(await fs.readFile(join(dir, '.dream_cursor'), 'utf8')) as Record<string, number>;

  it('Scenario: a run distils new records into MEMORY.md in two English phases and advances the cursor', async () => {
    await memory.history.appendTurn('a', { content: 'I live in Berlin' }, [], { content: 'Noted.' });
    model.script('## New facts\n- lives in Berlin', '```markdown\n# Personal\n- The user lives in Berlin\n```');
    const result = await service.run('manual');
    expect(result.ran).toBe(true);
    expect(result.run).toMatchObject({ outcome: 'updated', records_read: 2, cursors: { a: 2 }, revertible: true });
    expect(result.run?.model).toEqual({ provider: 'openai_compatible', model: 'turn-model' });
    expect(result.run?.model_source).toBe('last_turn');
    expect(await memoryFile()).toBe('# Personal\n- The user lives in Berlin\n');
    expect(await cursorFile()).toEqual({ a: 2 });
    expect(model.requests[0]!.system).toBe(DREAM_ANALYSIS_PROMPT);
    expect(model.requests[0]!.user).toBe(
      '## Recent conversation\n[2026-07-26 12:00] USER: I live in Berlin\n[2026-07-26 12:00] ASSISTANT: Noted.\n\n' +
        '## Current long-term memory\n(no memory yet)',
    );
    expect(model.requests[1]!.system).toBe(DREAM_EDITOR_PROMPT);
    expect(model.requests[1]!.user).toContain('## Analysis report\n## New facts\n- lives in Berlin\n\n## Current MEMORY.md\n(no memory yet)');
    expect(await dreamStore.readSnapshot(result.run!.id)).toBe('');
  });

  it('Scenario: the background model of the settings is preferred; an unavailable one falls back to the last turn model', async () => {
    await memory.history.appendTurn('a', { content: 'x' }, [], { content: 'y' });
    llm.background = { provider: 'openai_compatible', model: 'bg-model' };
    model.script('No changes', '');
    expect((await service.run('manual')).run).toMatchObject({
      model: { provider: 'openai_compatible', model: 'bg-model' },
      model_source: 'background',
      outcome: 'unchanged',
    });
    await memory.history.appendTurn('a', { content: 'x2' }, [], { content: 'y2' });
    llm.background = { provider: 'ollama', model: 'llama3' };
    model.script('No changes', '');
    expect((await service.run('manual')).run).toMatchObject({ model: { model: 'turn-model' }, model_source: 'last_turn' });
  });

  it('Scenario: without any model the run is skipped and nothing changes', async () => {
    await memory.history.appendTurn('a', { content: 'x' }, [], { content: 'y' });
    llm.last = null;
    expect(await service.run('schedule')).toEqual({ ran: false, reason: 'no_model', run: null });
    expect(model.requests).toHaveLength(0);
    await expect(fs.stat(join(dir, '.dream_cursor'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await service.listRuns()).toEqual([]);
  });

  it('Scenario: a line saved to MEMORY.md during the run is kept after the rewrite', async () => {
    await memory.history.appendTurn('a', { content: 'I like tea' }, [], { content: 'Noted.' });
    await memory.documents.saveLongTermMemory('The user is a teacher');
    model.script(
      async () => {
        await memory.documents.saveLongTermMemory('The user has a cat');
        return 'new: likes tea';
      },
      '# Facts\n- The user is a teacher\n- The user likes tea',
    );
    const result = await service.run('manual');
    expect(result.run?.outcome).toBe('updated');
    expect(await memoryFile()).toBe('# Facts\n- The user is a teacher\n- The user likes tea\n[2026-07-26 12:00] The user has a cat\n');
  });

  it('Scenario: an edit of MEMORY.md during the run wins; the run fails and the cursor stays', async () => {
    await memory.history.appendTurn('a', { content: 'I like tea' }, [], { content: 'Noted.' });
    await memory.documents.saveLongTermMemory('The user is a teacher');
    model.script(async () => {
      await memory.documents.updateDocument('MEMORY.md', () => ({ content: '# Edited by hand\n', result: null }));
      return 'analysis';
    }, '# Facts\n- tea');
    const result = await service.run('manual');
    expect(result.run).toMatchObject({ outcome: 'failed', cursors: {}, revertible: false });
    expect(result.run?.detail).toContain('edited during the run');
    expect(await memoryFile()).toBe('# Edited by hand\n');
    await expect(fs.stat(join(dir, '.dream_cursor'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Scenario: a model failure is recorded as failed and leaves MEMORY.md and the cursor untouched', async () => {
    await memory.history.appendTurn('a', { content: 'x' }, [], { content: 'y' });
    await memory.documents.saveLongTermMemory('keep me');
    const before = await memoryFile();
    model.script(async () => {
      throw new BackgroundModelError('timeout', 'the model did not answer within 1 s');
    });
    const result = await service.run('manual');
    expect(result.run).toMatchObject({ outcome: 'failed', diff: '', cursors: {} });
    expect(result.run?.detail).toContain('timeout');
    expect(await memoryFile()).toBe(before);
    await expect(fs.stat(join(dir, '.dream_cursor'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Scenario: a scheduled trigger during a run is skipped; a manual one is refused with dream_running', async () => {
    await memory.history.appendTurn('a', { content: 'x' }, [], { content: 'y' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    model.script(async () => {
      entered();
      await gate;
      return 'a';
    }, '');
    const first = service.run('schedule');
    await started;
    expect(service.running).toBe(true);
    await expect(service.run('schedule')).resolves.toEqual({ ran: false, reason: null, run: null });
    await expect(service.run('manual')).rejects.toMatchObject({ code: 'dream_running', httpStatus: 409 });
    release();
    expect((await first).run?.outcome).toBe('unchanged');
    expect(model.requests).toHaveLength(2);
  });

  it('Scenario: a chat whose history was re-created is read from its first record again', async () => {
    await dreamStore.updateCursor(() => ({ a: 40 }));
    await memory.history.appendTurn('a', { content: 'fresh start' }, [], { content: 'ok' });
    model.script('a', '');
    const result = await service.run('manual');
    expect(result.run).toMatchObject({ records_read: 2, cursors: { a: 2 } });
  });

  it('Scenario: deleting a session clears its cursor entry', async () => {
    await dreamStore.updateCursor(() => ({ a: 4, b: 2 }));
    await service.onSessionDeleted({ chatId: 'a' });
    expect(await cursorFile()).toEqual({ b: 2 });
  });
});

describe('Dream helpers', () => {
  const record = (cursor: number, timestamp = '2026-07-26 12:00'): HistoryRecord => ({
    cursor,
    timestamp,
    role: 'user',
    content: `m${cursor}`,
  });

  it('Scenario: the cursor advances only over a prefix of the records given to the model', () => {
    const a = [record(3), record(4, '2026-07-26 09:00'), record(5)];
    const b = [record(1), record(2)];
    const batch = [
      { chatId: 'a', record: a[1]! },
      { chatId: 'b', record: b[0]! },
    ];
    // chat a: cursor 4 was taken but 3 was not → a stays; chat b: 1 taken → advances to 1
    expect(advancedCursors(new Map([['a', a], ['b', b]]), batch)).toEqual({ b: 1 });
  });

  it('Scenario: the loss guard refuses to drop more than half of the entries', () => {
    expect(dropsTooMuch(6, 3)).toBe(false);
    expect(dropsTooMuch(6, 2)).toBe(true);
    expect(dropsTooMuch(1, 0)).toBe(true);
    expect(dropsTooMuch(0, 0)).toBe(false);
  });

  it('Scenario: the model output loses an enclosing code fence and ends with a newline', () => {
    expect(normaliseMemoryOutput('```md\n# A\n- b\n```')).toBe('# A\n- b\n');
    expect(normaliseMemoryOutput('  # A\n')).toBe('# A\n');
    expect(normaliseMemoryOutput(' \n ')).toBe('');
  });
});
