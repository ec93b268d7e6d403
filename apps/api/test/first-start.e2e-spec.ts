/**
 * The first start of the built server as a user runs it (openspec backup "Requirement: Two commands on a stock
 * machine"): it says where the console is and that the model settings are entered there, and, without bubblewrap, that
 * exec runs unconfined and how to fix it; a data directory written by a newer version stops it with one line.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { CURRENT_DATA_FORMAT, DATA_FORMAT_FILE } from '../src/backup/data-format';
import { ensureBuiltServer, killGroup, makeServerDirs, serverEnv, spawnServer, startedUrl, type WatchedProcess } from './support/server-process';

describe('first start (e2e, spawned server)', () => {
  let root: string;
  let server: WatchedProcess | undefined;

  beforeAll(() => ensureBuiltServer());

  beforeEach(async () => {
    ({ root } = await makeServerDirs());
  });

  afterEach(async () => {
    await killGroup(server);
    server = undefined;
    await fs.rm(root, { recursive: true, force: true });
  });

  it('Scenario: the first start says where the console is and what to do without bubblewrap', async () => {
    const dirs = { dataDir: join(root, 'data'), configDir: join(root, 'config') };
    // a PATH without bwrap: the exec sandbox cannot be found (CASHCODE_EXEC_SANDBOX=auto, the default)
    const emptyPath = join(root, 'empty-path');
    await fs.mkdir(emptyPath);
    server = spawnServer({ ...serverEnv(dirs), PATH: emptyPath });
    const httpUrl = await startedUrl(server);
    await server.waitFor(/enter the model settings there/);
    const output = server.output();
    expect(output).toContain(`cashcode: the console is at ${httpUrl}/ — enter the model settings there (Settings → LLM settings)`);
    expect(output).toContain(
      'cashcode: exec runs UNCONFINED (bubblewrap (bwrap) is not installed (not found on PATH)): its approval cards say UNCONFINED; ' +
        'install bubblewrap (e.g. sudo apt-get install bubblewrap) and restart to confine commands',
    );
  });

  it('Scenario: a data directory written by a newer version is refused', async () => {
    const dirs = { dataDir: join(root, 'data'), configDir: join(root, 'config') };
    await fs.mkdir(dirs.dataDir, { recursive: true });
    await fs.writeFile(join(dirs.dataDir, DATA_FORMAT_FILE), JSON.stringify({ format_version: CURRENT_DATA_FORMAT + 1, written_by: '99.0.0' }));
    server = spawnServer(serverEnv(dirs));
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output().trim()).toBe(
      `cashcode: the data directory ${dirs.dataDir} was written by a newer CashCode (99.0.0, data format ${CURRENT_DATA_FORMAT + 1}; ` +
        `this version reads up to format ${CURRENT_DATA_FORMAT}). Nothing was changed: upgrade CashCode, or start this version on ` +
        'another CASHCODE_DATA_DIR (a backup made by this version restores into an empty one)',
    );
    expect(await fs.readdir(dirs.dataDir)).toEqual([DATA_FORMAT_FILE]);
  });
});
