import type { LoggerService, LogLevel as NestLogLevel } from '@nestjs/common';
import { closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as winston from 'winston';
import DailyRotateFile from 'winston-daily-rotate-file';
import type { AppConfig, LogLevel } from '../config/app-config';
import { currentLogContext, LogIds, type LogContext } from './log-context';
import { formatLogLine } from './log-format';
import { mkdirPrivateSync, openPrivateSync, PRIVATE_FILE_MODE, writeFilePrivateSync } from './private-fs';

/** Winston levels, most severe first (Nest's order: verbose is the chattiest). */
const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, verbose: 4 };

/** The level names written in the log lines (Python logging's names). */
const LEVEL_NAMES: Record<string, string> = {
  error: 'ERROR',
  warn: 'WARNING',
  info: 'INFO',
  debug: 'DEBUG',
  verbose: 'VERBOSE',
};

export const LOG_FILE_NAME = 'cashcode.log';
/** winston-daily-rotate-file's record of the day files it created, which its retention deletes from */
export const LOG_AUDIT_FILE_NAME = '.cashcode-log-audit.json';

/**
 * Nest's start-up bookkeeping (a line per module, route and gateway subscription): logged at DEBUG, so that the
 * first INFO lines of a start are the application's own (where the console, the API docs and the gateway are).
 */
export const FRAMEWORK_STARTUP_LOGGERS: ReadonlySet<string> = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'WebSocketsController',
  'NestApplication',
]);

export interface AppLoggerOptions {
  logDir: string;
  fileLevel: LogLevel;
  consoleLevel: LogLevel;
  retentionDays: number;
  /** write to stdout/stderr (default true); tests turn it off */
  console?: boolean;
}

const lineFormat = winston.format.printf((info) => {
  const critical = info['critical'] === true;
  const loggerName = typeof info['logger'] === 'string' ? info['logger'] : '-';
  const message = typeof info.message === 'string' ? info.message : String(info.message);
  return formatLogLine({
    timestamp: info['time'] instanceof Date ? info['time'] : new Date(),
    level: critical ? 'CRITICAL' : (LEVEL_NAMES[info.level] ?? info.level.toUpperCase()),
    logger: loggerName,
    context: {
      requestId: typeof info['requestId'] === 'string' ? info['requestId'] : undefined,
      chatId: typeof info['chatId'] === 'string' ? info['chatId'] : undefined,
      turnId: typeof info['turnId'] === 'string' ? info['turnId'] : undefined,
    },
    message,
  });
});

function describeError(value: unknown): string {
  // Tracebacks are kept, the exception text is replaced (it may carry secrets or paths).
  if (value instanceof Error) {
    const frames = (value.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
    return [`${value.name}: exception details omitted`, ...frames].join('\n');
  }
  return typeof value === 'string' ? value : '';
}

function localDay(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (error instanceof Error ? error.name : 'unknown error');
}

/**
 * The runtime log file, written by winston-daily-rotate-file: `<logDir>/cashcode.log.YYYY-MM-DD` for the local day,
 * appended across restarts, `<logDir>/cashcode.log` a symlink to it (a regular file of that name is left alone). The
 * day changes at the first record after local midnight. Retention: the day files the transport created (listed in
 * `.cashcode-log-audit.json`) that are older than `retentionDays` days are deleted when a day file is opened (at start
 * and at each rotation); no other file is ever deleted.
 *
 * Owner-only files: the directory is created 0700 and the day files 0600 (the stream's `mode`), whatever the umask;
 * the audit file is created here, 0600, before the library first rewrites it (a rewrite keeps the mode). The day file
 * is opened once synchronously, so that a log file that cannot be opened aborts the start instead of failing later.
 * A write that fails later is reported once on stderr and never crashes the server.
 *
 * This replaced a hand-written day-file transport at no measured cost (bench/README.md).
 */
function createFileTransport(logDir: string, retentionDays: number, level: LogLevel): DailyRotateFile {
  mkdirPrivateSync(logDir);
  closeSync(openPrivateSync(join(logDir, `${LOG_FILE_NAME}.${localDay(new Date(Date.now()))}`), 'a'));
  const days = Math.max(1, Math.floor(retentionDays));
  const auditFile = join(logDir, LOG_AUDIT_FILE_NAME);
  if (!existsSync(auditFile)) {
    const audit = { keep: { days: true, amount: days }, auditLog: auditFile, files: [], hashType: 'sha256' };
    writeFilePrivateSync(auditFile, `${JSON.stringify(audit, null, 4)}`);
  }
  const transport = new DailyRotateFile({
    dirname: logDir,
    filename: `${LOG_FILE_NAME}.%DATE%`,
    datePattern: 'YYYY-MM-DD',
    extension: '',
    maxFiles: `${days}d`,
    createSymlink: true,
    symlinkName: LOG_FILE_NAME,
    auditFile,
    options: { flags: 'a', mode: PRIVATE_FILE_MODE },
    level,
  });
  let reported = false;
  transport.logStream.on('error', (error: unknown) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`cashcode: writing the log file in ${logDir} failed (${describeFsError(error)}); lines are lost until the next day file\n`);
  });
  transport.on('new', () => {
    reported = false;
  });
  return transport;
}

/**
 * The application's Nest LoggerService: winston with the daily file `<logDir>/cashcode.log` (see createFileTransport)
 * and the console, both in one line format with final redaction. Chat / turn ids come with the call (a LogIds
 * argument), a request id from the request being handled (see log-context.ts).
 * Throws when the log directory or file cannot be created or opened (startup aborts).
 */
export class AppLogger implements LoggerService {
  private readonly winston: winston.Logger;
  private readonly file: DailyRotateFile;
  /** the chattiest level any transport writes; calls above it return before doing any work */
  private readonly maxLevel: number;
  private closed = false;

  constructor(options: AppLoggerOptions) {
    this.file = createFileTransport(options.logDir, options.retentionDays, options.fileLevel);
    const transports: winston.transport[] = [this.file];
    this.maxLevel = LEVELS[options.fileLevel];
    if (options.console !== false) {
      transports.push(
        new winston.transports.Console({
          level: options.consoleLevel,
          stderrLevels: ['error', 'warn'],
        }),
      );
      this.maxLevel = Math.max(this.maxLevel, LEVELS[options.consoleLevel]);
    }
    // The line is rendered (and redacted) once, by the logger, for every transport; this also replaces winston's
    // default logger format (a JSON serialisation of every record that no transport uses).
    this.winston = winston.createLogger({ levels: LEVELS, format: lineFormat, transports, exitOnError: false });
  }

  static fromConfig(config: AppConfig, overrides: Partial<AppLoggerOptions> = {}): AppLogger {
    return new AppLogger({
      logDir: config.logDir,
      fileLevel: config.fileLogLevel,
      consoleLevel: config.consoleLogLevel,
      retentionDays: config.logRetentionDays,
      ...overrides,
    });
  }

  log(message: unknown, ...optionalParams: unknown[]): void {
    const loggerName = optionalParams[optionalParams.length - 1];
    const framework = typeof loggerName === 'string' && FRAMEWORK_STARTUP_LOGGERS.has(loggerName);
    this.write(framework ? 'debug' : 'info', message, optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams, true);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.write('warn', message, optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.write('debug', message, optionalParams);
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.write('verbose', message, optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams, true, true);
  }

  setLogLevels(_levels: NestLogLevel[]): void {
    // Levels come from the configuration (file and console independently).
  }

  /** Flushes and closes the transports; resolves once the file holds every line logged. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => {
      this.winston.on('finish', () => resolve());
      this.winston.end();
      setTimeout(resolve, 1000).unref();
    });
    // winston ends its transports, not the file stream below the daily file: end it and wait until it is written
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      timer.unref();
      (this.file.logStream as NodeJS.WritableStream & { end(callback: () => void): void }).end(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private write(level: LogLevel, message: unknown, params: unknown[], isError = false, critical = false): void {
    if (this.closed || LEVELS[level] > this.maxLevel) return;
    // Nest calls: (message, context) / (message, stack, context) / (message, ...extra, context).
    const rest = [...params];
    let loggerName = '-';
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') loggerName = rest.pop() as string;
    let context: LogContext = currentLogContext();
    for (let i = rest.length - 1; i >= 0; i--) {
      const extra = rest[i];
      if (extra instanceof LogIds) {
        context = { ...context, ...extra.context };
        rest.splice(i, 1);
      }
    }
    let text: string;
    if (message instanceof Error) text = describeError(message);
    else if (typeof message === 'string') text = message;
    else text = safeStringify(message);
    if (isError) {
      for (const extra of rest) {
        if (extra instanceof Error) text += `\n${describeError(extra)}`;
        else if (typeof extra === 'string' && /\n[ \t]+at /.test(extra)) {
          // A stack string passed by Nest: keep only the frames.
          const frames = extra.split('\n').filter((line) => /^\s+at /.test(line));
          if (frames.length > 0) text += `\n${frames.join('\n')}`;
        }
      }
    }
    this.winston.log({
      level,
      message: text,
      logger: loggerName,
      time: new Date(Date.now()),
      critical,
      requestId: context.requestId,
      chatId: context.chatId,
      turnId: context.turnId,
    });
  }
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
