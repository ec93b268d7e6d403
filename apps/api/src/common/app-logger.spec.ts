import { Logger } from '@nestjs/common';
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppLogger, LOG_FILE_NAME } from './app-logger';
import { runWithLogContext } from './log-context';

describe(AppLogger.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-log-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: lines go to cashcode.log in the §14 format, with ids from the context and redaction', async () => {
    const logger = new AppLogger({ logDir: dir, fileLevel: 'debug', consoleLevel: 'error', retentionDays: 3, console: false });
    runWithLogContext({ chatId: 'chat-1', turnId: 'a'.repeat(32) }, () => {
      logger.log('event=agent.turn.started content_chars=5', 'AgentRunner');
      logger.verbose('too chatty', 'AgentRunner');
    });
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
    } finally {
      Logger.overrideLogger(false);
    }
    await logger.close();
    const text = await fs.readFile(join(dir, LOG_FILE_NAME), 'utf8');
    expect(text).toMatch(/INFO {5}SomeService request_id=- chat_id=- turn_id=- event=x\.y a=1/);
  });
});
