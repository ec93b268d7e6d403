import { Logger } from '@nestjs/common';
import { existsSync, promises as fs, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppLogger, LOG_FILE_NAME } from './app-logger';
import { logIds } from './log-context';

describe(AppLogger.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-log-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

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
    const logger = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false, now: () => now });
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
    const now = () => new Date(2026, 5, 14, 12, 0, 0).getTime();
    const first = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false, now });
    first.log('event=first.run', 'Boot');
    await first.close();
    const second = new AppLogger({ logDir: dir, fileLevel: 'info', consoleLevel: 'error', retentionDays: 10, console: false, now });
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

  it('Scenario: a log directory that cannot be created aborts startup', () => {
    const blocker = join(dir, 'not-a-directory');
    writeFileSync(blocker, 'x');
    expect(
      () => new AppLogger({ logDir: join(blocker, 'logs'), fileLevel: 'info', consoleLevel: 'error', retentionDays: 1, console: false }),
    ).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
