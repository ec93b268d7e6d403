import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CURRENT_DATA_FORMAT, DATA_FORMAT_FILE, DataFormatError, readDataFormat } from './data-format';
import { type DataMigration, MIGRATION_BACKUP_DIR, prepareDataDir } from './migrations';

describe('data format and migrations', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-format-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const marker = async () => JSON.parse(await fs.readFile(join(dataDir, DATA_FORMAT_FILE), 'utf8')) as Record<string, unknown>;

  it('stamps a new directory (empty folders made by the start do not count as data)', async () => {
    await fs.mkdir(join(dataDir, 'memory'));
    await fs.mkdir(join(dataDir, 'logs'));
    await fs.writeFile(join(dataDir, 'logs', 'cashcode.log'), 'x');
    expect(await prepareDataDir(dataDir, { writtenBy: '0.1.0' })).toEqual({ found: null, migrated: [] });
    expect(await marker()).toEqual({ format_version: CURRENT_DATA_FORMAT, written_by: '0.1.0' });
  });

  it('reads data without a marker as format 0 and migrates it', async () => {
    await fs.mkdir(join(dataDir, 'memory', 'chat-a'), { recursive: true });
    await fs.writeFile(join(dataDir, 'memory', 'chat-a', 'history.jsonl'), '{}\n');
    const log: string[] = [];
    expect(await prepareDataDir(dataDir, { writtenBy: '0.1.0', log: (line) => log.push(line) })).toEqual({ found: 0, migrated: ['0→1'] });
    expect(log).toEqual(['data format 0 → 1: record the data format version (the layout is unchanged)']);
    expect((await readDataFormat(dataDir))?.format_version).toBe(1);
  });

  it('Scenario: a migration copies what it changes and runs once', async () => {
    await fs.writeFile(join(dataDir, DATA_FORMAT_FILE), JSON.stringify({ format_version: 1, written_by: '0.1.0' }));
    await fs.mkdir(join(dataDir, 'mcp'));
    await fs.writeFile(join(dataDir, 'mcp', 'servers.json'), '{"old":true}');
    let runs = 0;
    const step: DataMigration = {
      from: 1,
      to: 2,
      description: 'rename a field',
      touches: ['mcp/servers.json', 'not-there.json'],
      run: async (dir) => {
        runs += 1;
        await fs.writeFile(join(dir, 'mcp', 'servers.json'), '{"new":true}');
      },
    };
    const options = { writtenBy: '0.2.0', migrations: [step], current: 2 };
    expect(await prepareDataDir(dataDir, options)).toEqual({ found: 1, migrated: ['1→2'] });
    const copies = await fs.readdir(join(dataDir, MIGRATION_BACKUP_DIR));
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatch(/^1-to-2-/);
    expect(await fs.readFile(join(dataDir, MIGRATION_BACKUP_DIR, copies[0] as string, 'mcp', 'servers.json'), 'utf8')).toBe('{"old":true}');
    expect(await fs.readFile(join(dataDir, 'mcp', 'servers.json'), 'utf8')).toBe('{"new":true}');
    expect(await marker()).toEqual({ format_version: 2, written_by: '0.2.0' });

    expect(await prepareDataDir(dataDir, options)).toEqual({ found: 2, migrated: [] });
    expect(runs).toBe(1);
  });

  it('Scenario: a failed migration stops the start and keeps the old format', async () => {
    await fs.writeFile(join(dataDir, DATA_FORMAT_FILE), JSON.stringify({ format_version: 1, written_by: '0.1.0' }));
    const step: DataMigration = {
      from: 1,
      to: 2,
      description: 'split the ledger',
      touches: [],
      run: async () => {
        throw new Error('disk full');
      },
    };
    await expect(prepareDataDir(dataDir, { writtenBy: '0.2.0', migrations: [step], current: 2 })).rejects.toThrow(
      `the migration of ${dataDir} from data format 1 to 2 (split the ledger) failed: disk full`,
    );
    expect((await marker())['format_version']).toBe(1);
  });

  it('Scenario: a data directory written by a newer version is refused', async () => {
    const text = JSON.stringify({ format_version: CURRENT_DATA_FORMAT + 1, written_by: '9.0.0' });
    await fs.writeFile(join(dataDir, DATA_FORMAT_FILE), text);
    const error = await prepareDataDir(dataDir, { writtenBy: '0.1.0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFormatError);
    expect((error as Error).message).toContain(`the data directory ${dataDir} was written by a newer CashCode (9.0.0, data format ${CURRENT_DATA_FORMAT + 1}`);
    expect(await fs.readFile(join(dataDir, DATA_FORMAT_FILE), 'utf8')).toBe(text);
  });

  it('refuses an unreadable marker instead of guessing', async () => {
    await fs.writeFile(join(dataDir, DATA_FORMAT_FILE), 'not json');
    await expect(prepareDataDir(dataDir, { writtenBy: '0.1.0' })).rejects.toThrow('is not a valid format marker');
  });
});
