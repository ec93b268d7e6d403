import { Logger } from '@nestjs/common';
import { existsSync, promises as fs, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppLogger, LOG_AUDIT_FILE_NAME, LOG_FILE_NAME } from './app-logger';
import { logIds } from './log-context';

describe(AppLogger.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-log-'));
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** The clock of the line timestamps, of the day file and of the retention (winston-daily-rotate-file reads Date.now). */
  function setClock(at: () => number): void {
    jest.spyOn(Date, 'now').mockImplementation(at);
  }

  it('Scenario: lines go to cashcode.log in the runtime log format, with the ids given to the call and redaction', async () => {
    const logger = new AppLogger({ logDir: dir, fileLevel: 'debug', consoleLevel: 'error', retentionDays: 3, console: false });
    const ids = logIds({ chatId: 'chat-1', turnId: 'a'.repeat(32) });
    logger.log('event=agent.turn.started content_chars=5', ids, 'AgentRunner');
    logger.verbose('too chatty', ids, 'AgentRunner');
    logger.error(new Error('boom with api_key=abc'), undefined, 'Svc');
    logger.warn('Bearer secret-token-value', 'Svc');
    await logger.close();
    const file = join(dir, LOG_FILE_NAME);
    expect(existsSync(file)).toBe(true);
    const text = await fs.readFile(file, 'utf8');
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4} INFO {5}AgentRunner request_id=- chat_id=chat-1 turn_id=a{32} event=agent\.turn\.started content_chars=5$/,
    );
    expect(text).not.toContain('too chatty');
    expect(text).toContain('ERROR    Svc request_id=- chat_id=- turn_id=- Error: exception details omitted');
    expect(text).not.toContain('boom');
    expect(text).toContain('WARNING  Svc request_id=- chat_id=- turn_id=- Bearer [redacted]');
    expect(text).not.toContain('secret-token-value');
    const archives = (await fs.readdir(dir)).filter((name) => /^cashcode\.log\.\d{4}-\d{2}-\d{2}$/.test(name));
    expect(archives).toHaveLength(1);
  });

  it('Scenario: works as the Nest logger behind Logger instances', async () => {
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 1, console: false });
    Logger.overrideLogger(logger);
    try {
      new Logger('SomeService').log('event=x.y a=1');
      new Logger('TurnService').warn('event=x.z', logIds({ chatId: 'c-7', turnId: 'b'.repeat(32) }));
      new Logger('TurnService').error('event=x.failed', logIds({ chatId: 'c-7' }));
    } finally {
      Logger.overrideLogger(false);
    }
    await logger.close();
    const text = await fs.readFile(join(dir, LOG_FILE_NAME), 'utf8');
    expect(text).toMatch(/INFO {5}SomeService request_id=- chat_id=- turn_id=- event=x\.y a=1/);
    expect(text).toContain(`WARNING  TurnService request_id=- chat_id=c-7 turn_id=${'b'.repeat(32)} event=x.z\n`);
    expect(text).toContain('ERROR    TurnService request_id=- chat_id=c-7 turn_id=- event=x.failed\n');
  });

  it('Scenario: the day file changes at the first record after local midnight', async () => {
    let now = new Date(2026, 5, 14, 23, 59, 59, 900).getTime();
    setClock(() => now);
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false });
    logger.log('event=before.midnight', 'Clock');
    now = new Date(2026, 5, 15, 0, 0, 0, 5).getTime();
    // nothing is logged yet on the new day: no new file
    expect(existsSync(join(dir, `${LOG_FILE_NAME}.2026-06-15`))).toBe(false);
    logger.log('event=after.midnight', 'Clock');
    logger.log('event=after.midnight.again', 'Clock');
    await logger.close();

    const before = await fs.readFile(join(dir, `${LOG_FILE_NAME}.2026-06-14`), 'utf8');
    const after = await fs.readFile(join(dir, `${LOG_FILE_NAME}.2026-06-15`), 'utf8');
    expect(before).toMatch(/^2026-06-14 23:59:59\.900 [+-]\d{4} INFO {5}Clock .* event=before\.midnight\n$/);
    expect(after.split('\n')).toEqual([
      expect.stringMatching(/^2026-06-15 00:00:00\.005 .* event=after\.midnight$/),
      expect.stringMatching(/^2026-06-15 00:00:00\.005 .* event=after\.midnight\.again$/),
      '',
    ]);
    expect(await fs.readlink(join(dir, LOG_FILE_NAME))).toBe(`${LOG_FILE_NAME}.2026-06-15`);
  });

  it('Scenario: the log file is appended across restarts', async () => {
    setClock(() => new Date(2026, 5, 14, 12, 0, 0).getTime());
    const first = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false });
    first.log('event=first.run', 'Boot');
    await first.close();
    const second = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false });
    second.log('event=second.run', 'Boot');
    await second.close();

    const lines = (await fs.readFile(join(dir, LOG_FILE_NAME), 'utf8')).trim().split('\n');
    expect(lines).toEqual([expect.stringMatching(/event=first\.run$/), expect.stringMatching(/event=second\.run$/)]);
  });

  it('Scenario: close writes every line logged, including the current event-loop turn', async () => {
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false });
    for (let i = 0; i < 500; i += 1) logger.log(`event=burst.line n=${i}`, 'Burst');
    await new Promise((resolve) => setImmediate(resolve)); // the first batch is being written
    for (let i = 500; i < 1000; i += 1) logger.log(`event=burst.line n=${i}`, 'Burst');
    await logger.close();
    await logger.close(); // a second close is harmless

    const lines = (await fs.readFile(join(dir, LOG_FILE_NAME), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1000);
    expect(lines.map((line) => Number(/ n=(\d+)$/.exec(line)?.[1]))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  /** Files that the retention must never touch: other suffixes, other base names, day files it did not create. */
  const UNRELATED = [
    'cashcode.log.2026-01-01.gz',
    'cashcode.log.old',
    'other.log.2026-01-01',
    'xcashcode.log.2026-01-01',
    'cashcode.log.2026-01-02',
  ];

  it('Scenario: the retention deletes the day files it created that are older than CASHCODE_LOG_RETENTION_DAYS, nothing else', async () => {
    for (const name of UNRELATED) await fs.writeFile(join(dir, name), `${name}\n`);
    let now = new Date(2026, 5, 12, 9, 0).getTime();
    setClock(() => now);
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 2, console: false });
    for (const day of [12, 13, 14, 15]) {
      now = new Date(2026, 5, day, 9, 0).getTime();
      logger.log(`event=day.${day}`, 'Clock');
      // the day file's stream opens and writes (a day passes between rotations)
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await logger.close();

    // retention 2: on the 15th, the files of the 12th and 13th (created more than 2 days before) are gone
    expect((await fs.readdir(dir)).sort()).toEqual(
      [...UNRELATED, LOG_FILE_NAME, LOG_AUDIT_FILE_NAME, 'cashcode.log.2026-06-14', 'cashcode.log.2026-06-15'].sort(),
    );
    expect(await fs.readFile(join(dir, 'cashcode.log.2026-01-02'), 'utf8')).toBe('cashcode.log.2026-01-02\n');

    // a restart on a later day applies the same retention at once
    now = new Date(2026, 5, 20, 9, 0).getTime();
    const again = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 2, console: false });
    again.log('event=day.20', 'Clock');
    await again.close();
    expect((await fs.readdir(dir)).filter((name) => /^cashcode\.log\.2026-06-\d\d$/.test(name))).toEqual(['cashcode.log.2026-06-20']);
  });

  it('Scenario: with umask 022 the log directory is 0700 and the day file and audit file are 0600', async () => {
    const previous = process.umask(0o022);
    try {
      const logDir = join(dir, 'logs', 'nested');
      const logger = new AppLogger({ logDir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 3, console: false });
      logger.log('event=private', 'Boot');
      await logger.close();
      const mode = async (path: string) => (await fs.stat(path)).mode & 0o777;
      expect(await mode(join(dir, 'logs'))).toBe(0o700);
      expect(await mode(logDir)).toBe(0o700);
      const names = await fs.readdir(logDir);
      expect(names).toHaveLength(3);
      expect(names).toEqual(expect.arrayContaining([LOG_AUDIT_FILE_NAME, LOG_FILE_NAME, expect.stringMatching(/^cashcode\.log\.\d{4}-\d{2}-\d{2}$/)]));
      for (const name of names) expect([name, await mode(join(logDir, name))]).toEqual([name, 0o600]);
    } finally {
      process.umask(previous);
    }
  });

  it('Scenario: a regular file named cashcode.log is left alone', async () => {
    setClock(() => new Date(2026, 5, 14, 12, 0).getTime());
    await fs.writeFile(join(dir, LOG_FILE_NAME), 'kept\n');
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 1, console: false });
    logger.log('event=new.line', 'Boot');
    await logger.close();

    expect(await fs.readFile(join(dir, LOG_FILE_NAME), 'utf8')).toBe('kept\n');
    expect(await fs.readFile(join(dir, 'cashcode.log.2026-06-14'), 'utf8')).toMatch(/event=new\.line\n$/);
  });

  const withDevFull = existsSync('/dev/full') ? it : it.skip;
  withDevFull('Scenario: failing writes are reported once on stderr and never crash the server', async () => {
    setClock(() => new Date(2026, 5, 14, 12, 0).getTime());
    // the day file is a link to /dev/full: opening works, every write fails with ENOSPC
    await fs.symlink('/dev/full', join(dir, 'cashcode.log.2026-06-14'));
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 1, console: false });
    logger.log('event=lost.one', 'Disk');
    await new Promise((resolve) => setTimeout(resolve, 50));
    logger.log('event=lost.two', 'Disk');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await logger.close();

    const messages = stderr.mock.calls.map(([chunk]) => String(chunk));
    expect(messages).toEqual([expect.stringMatching(/^cashcode: writing the log file in .* failed \(ENOSPC\)/)]);
  });

  it('Scenario: a log directory that cannot be created aborts startup', () => {
    const blocker = join(dir, 'not-a-directory');
    writeFileSync(blocker, 'x');
    expect(
      () => new AppLogger({ logDir: join(blocker, 'logs'), fileLevel: 'info', consoleLevel: 'error', retentionDays: 1, console: false }),
    ).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
