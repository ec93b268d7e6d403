import { AsyncLocalStorage } from 'node:async_hooks';

/** Correlation ids carried by every log line written inside a request or an agent turn (spec §14). */
export interface LogContext {
  requestId?: string;
  chatId?: string;
  turnId?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `context` merged over the current context; log lines written inside carry its ids. */
export function runWithLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, fn);
}

/** The ids of the current request / turn, if any. */
export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}
