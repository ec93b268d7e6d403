import type { LoggerService, LogLevel as NestLogLevel } from '@nestjs/common';
import * as winston from 'winston';
import type { AppConfig, LogLevel } from '../config/app-config';
import { DailyFileTransport } from './daily-file-transport';
import { currentLogContext, LogIds, type LogContext } from './log-context';
import { formatLogLine } from './log-format';

/** Winston levels, most severe first (Nest's order: verbose is the chattiest). */
const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, verbose: 4 };

/** Python-style level names of spec §14. */
const LEVEL_NAMES: Record<string, string> = {
  error: 'ERROR',
  warn: 'WARNING',
  info: 'INFO',
  debug: 'DEBUG',
  verbose: 'VERBOSE',
};

export const LOG_FILE_NAME = 'cashcode.log';

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
  /** epoch milliseconds for the line timestamps and the file's day (default Date.now); tests inject a clock */
  now?: () => number;
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
  // Spec §14: tracebacks are kept, the exception text is replaced (it may carry secrets or paths).
  if (value instanceof Error) {
    const frames = (value.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
    return [`${value.name}: exception details omitted`, ...frames].join('\n');
  }
  return typeof value === 'string' ? value : '';
}

/**
 * The application's Nest LoggerService: winston with a daily file `<logDir>/cashcode.log` (symlink to the current
 * `cashcode.log.YYYY-MM-DD`; archives kept for `retentionDays`, see DailyFileTransport) and the console, both in the
 * §14 line format with final redaction. Chat / turn ids come with the call (a LogIds argument), a request id from the
 * request being handled (see log-context.ts).
 * Throws when the log directory or file cannot be created or opened (startup aborts).
 */
export class AppLogger implements LoggerService {
  private readonly winston: winston.Logger;
  private readonly file: DailyFileTransport;
  private readonly now: () => number;
  /** the chattiest level any transport writes; calls above it return before doing any work */
  private readonly maxLevel: number;
  private closed = false;

  constructor(options: AppLoggerOptions) {
    this.now = options.now ?? Date.now;
    this.file = new DailyFileTransport({
      dirname: options.logDir,
      baseName: LOG_FILE_NAME,
      retentionDays: options.retentionDays,
      level: options.fileLevel,
      now: this.now,
    });
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
    await this.file.closeFile();
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
      time: new Date(this.now()),
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
