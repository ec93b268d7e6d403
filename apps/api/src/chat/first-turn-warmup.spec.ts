import { Logger } from '@nestjs/common';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { createMemoryStores, type MemoryStores } from '../memory/memory-stores';
import { FirstTurnWarmup } from './first-turn-warmup';

describe(FirstTurnWarmup.name, () => {
  let dir: string;
  let stores: MemoryStores;

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-warmup-'));
    stores = createMemoryStores({ memoryDir: dir } as AppConfig);
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await stores.shutdown();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the first-turn paths are warmed after listen without any request leaving the process', async () => {
    await fs.writeFile(join(dir, 'SOUL.md'), 'You are a test persona.');
    const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
    const soul = jest.spyOn(stores.documents, 'readSoul');
    const outbound = jest.spyOn(globalThis, 'fetch');
    const warmup = new FirstTurnWarmup(stores.documents);
    await warmup.warm();
    expect(soul).toHaveBeenCalledTimes(1);
    expect(outbound).not.toHaveBeenCalled();
    const lines = debug.mock.calls.map((call) => String(call[0]));
    expect(lines.some((line) => line.startsWith('event=server.warmup.done'))).toBe(true);
    expect(lines.filter((line) => line.includes('step_failed'))).toEqual([]);
    // once per process
    await warmup.warm();
    expect(soul).toHaveBeenCalledTimes(1);
  });
});
