import { AsyncLocalStorage } from 'node:async_hooks';

/** Correlation ids carried by every log line written inside a request or an agent turn (openspec http-platform). */
export interface LogContext {
  requestId?: string;
  chatId?: string;
  turnId?: string;
}

/**
 * Ids given to one log line explicitly: `this.logger.log(message, logIds({ chatId, turnId }))`.
 *
 * A turn's lines get their chat and turn ids this way rather than through an async context: on Node 20 an active
 * AsyncLocalStorage runs promise hooks for every promise of the process, and a turn (the model SDK's streaming is
 * made of promises) paid about 0.4 ms for them.
 */
export class LogIds {
  constructor(readonly context: Readonly<LogContext>) {}
}

export function logIds(context: LogContext): LogIds {
  return new LogIds(context);
}

const requestContext = new AsyncLocalStorage<LogContext>();
let requestsInFlight = 0;

/**
 * Runs the handling of an HTTP request with its id as the log context of every line written meanwhile, however deep
 * (services log without knowing the request). The async context is tracked only while requests are in flight: when
 * the last one has ended (`ended` calls back once), tracking is switched off again, so the chat turns running between
 * requests pay nothing for it.
 */
export function runRequestWithLogContext<T>(requestId: string, ended: (onEnd: () => void) => void, fn: () => T): T {
  requestsInFlight++;
  let counted = true;
  ended(() => {
    if (!counted) return;
    counted = false;
    requestsInFlight--;
    if (requestsInFlight === 0) requestContext.disable();
  });
  return requestContext.run({ requestId }, fn);
}

/** The id of the HTTP request being handled, if any. */
export function currentLogContext(): LogContext {
  return requestContext.getStore() ?? {};
}

/** HTTP requests whose handling has not ended yet (tests check that the count returns to zero). */
export function requestsWithLogContext(): number {
  return requestsInFlight;
}
