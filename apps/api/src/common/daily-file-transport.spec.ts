import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DailyFileTransport } from './daily-file-transport';

const MESSAGE = Symbol.for('message');

/** Hands the transport one rendered line, as winston does. */
function logLine(transport: DailyFileTransport, line: string): void {
  transport.log({ level: 'info', message: line, [MESSAGE]: line }, () => undefined);
}

describe(DailyFileTransport.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-daily-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** Files that cleanup must never touch: other suffixes, other base names, not-a-date suffixes, the old audit file. */
  const UNRELATED = [
    'cashcode.log.2026-01-01.gz',
    'cashcode.log.2026-01-01.bak',
    'cashcode.log.old',
    'cashcode.log.2026-02-30',
    'cashcode.log.20260101',
    'other.log.2026-01-01',
    'xcashcode.log.2026-01-01',
    '.cashcode-log-audit.json',
  ];

  async function touch(names: string[]): Promise<void> {
    for (const name of names) await fs.writeFile(join(dir, name), `${name}\n`);
  }

  it('Scenario: startup cleanup deletes only dated files older than the retention', async () => {
    await touch([...UNRELATED, 'cashcode.log.2026-06-10', 'cashcode.log.2026-06-11', 'cashcode.log.2026-06-12', 'cashcode.log.2026-06-13']);
    const transport = new DailyFileTransport({
      dirname: dir,
      baseName: 'cashcode.log',
      retentionDays: 3,
      now: () => new Date(2026, 5, 14, 8, 30).getTime(),
    });
    await transport.closeFile();

    // retention 3 = the active day (06-14) and the two before it
    expect((await fs.readdir(dir)).sort()).toEqual(
      [...UNRELATED, 'cashcode.log', 'cashcode.log.2026-06-12', 'cashcode.log.2026-06-13', 'cashcode.log.2026-06-14'].sort(),
    );
    expect(await fs.readFile(join(dir, 'cashcode.log.2026-06-13'), 'utf8')).toBe('cashcode.log.2026-06-13\n');
  });

  it('Scenario: rotation moves the link to the new day and deletes the day that left the retention', async () => {
    await touch([...UNRELATED, 'cashcode.log.2026-06-12', 'cashcode.log.2026-06-13']);
    let now = new Date(2026, 5, 14, 23, 59, 59, 999).getTime();
    const transport = new DailyFileTransport({ dirname: dir, baseName: 'cashcode.log', retentionDays: 3, now: () => now });
    logLine(transport, 'line of the 14th');
    expect(await fs.readlink(join(dir, 'cashcode.log'))).toBe('cashcode.log.2026-06-14');

    now = new Date(2026, 5, 15, 0, 0, 0, 0).getTime();
    logLine(transport, 'line of the 15th');
    await transport.closeFile();

    expect(await fs.readlink(join(dir, 'cashcode.log'))).toBe('cashcode.log.2026-06-15');
    expect(await fs.readFile(join(dir, 'cashcode.log.2026-06-14'), 'utf8')).toBe('line of the 14th\n');
    expect(await fs.readFile(join(dir, 'cashcode.log'), 'utf8')).toBe('line of the 15th\n');
    expect((await fs.readdir(dir)).sort()).toEqual(
      [...UNRELATED, 'cashcode.log', 'cashcode.log.2026-06-13', 'cashcode.log.2026-06-14', 'cashcode.log.2026-06-15'].sort(),
    );
  });

  it('Scenario: several days without records rotate once, to the day of the next record', async () => {
    let now = new Date(2026, 5, 14, 12, 0).getTime();
    const transport = new DailyFileTransport({ dirname: dir, baseName: 'cashcode.log', retentionDays: 2, now: () => now });
    logLine(transport, 'a');
    now = new Date(2026, 5, 18, 9, 0).getTime();
    logLine(transport, 'b');
    now = new Date(2026, 5, 18, 23, 0).getTime();
    logLine(transport, 'c');
    await transport.closeFile();

    // retention 2 = 06-18 and 06-17: the 14th is gone, no empty files for the days in between
    expect((await fs.readdir(dir)).sort()).toEqual(['cashcode.log', 'cashcode.log.2026-06-18']);
    expect(await fs.readFile(join(dir, 'cashcode.log'), 'utf8')).toBe('b\nc\n');
  });

  it('Scenario: a regular file named cashcode.log is left alone', async () => {
    await fs.writeFile(join(dir, 'cashcode.log'), 'kept\n');
    const transport = new DailyFileTransport({
      dirname: dir,
      baseName: 'cashcode.log',
      retentionDays: 1,
      now: () => new Date(2026, 5, 14, 12, 0).getTime(),
    });
    logLine(transport, 'new line');
    await transport.closeFile();

    expect(await fs.readFile(join(dir, 'cashcode.log'), 'utf8')).toBe('kept\n');
    expect(await fs.readFile(join(dir, 'cashcode.log.2026-06-14'), 'utf8')).toBe('new line\n');
  });

  it('Scenario: lines of one event-loop turn are written together, after the turn', async () => {
    const transport = new DailyFileTransport({ dirname: dir, baseName: 'cashcode.log', retentionDays: 1 });
    logLine(transport, 'one');
    logLine(transport, 'two');
    const file = join(dir, 'cashcode.log');
    // written by the flush after this turn, not line by line
    expect(readFileSync(file, 'utf8')).toBe('');
    await transport.closeFile();
    expect(await fs.readFile(file, 'utf8')).toBe('one\ntwo\n');
  });

  const withDevFull = existsSync('/dev/full') ? it : it.skip;
  withDevFull('Scenario: failing writes are reported once on stderr and never crash the server', async () => {
    const now = () => new Date(2026, 5, 14, 12, 0).getTime();
    // the day file is a link to /dev/full: opening works, every write fails with ENOSPC
    await fs.symlink('/dev/full', join(dir, 'cashcode.log.2026-06-14'));
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const transport = new DailyFileTransport({ dirname: dir, baseName: 'cashcode.log', retentionDays: 1, now });
      logLine(transport, 'lost one');
      await new Promise((resolve) => setImmediate(resolve));
      logLine(transport, 'lost two');
      await transport.closeFile();

      const messages = stderr.mock.calls.map(([chunk]) => String(chunk));
      expect(messages).toEqual([expect.stringMatching(/^cashcode: writing the log file .*cashcode\.log\.2026-06-14 failed \(ENOSPC\)/)]);
    } finally {
      stderr.mockRestore();
    }
  });
});
