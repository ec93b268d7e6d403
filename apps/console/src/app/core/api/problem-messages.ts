import { isRecord } from '@cashcode/contracts';

import { EN_MESSAGES } from '../i18n/messages.en';
import type { MessageKey, MessageParams } from '../i18n/i18n';

/**
 * The translation key of a server error `code` (REST problem or WS `error` event): `problem.<code>`, one for every
 * code of the contracts' SERVER_ERROR_CODES (the i18n tests check this). Undefined for a code the console does not
 * know; then the server's `detail` is shown.
 */
export function problemMessageKey(code: string): MessageKey | undefined {
  const key = `problem.${code}`;
  return Object.prototype.hasOwnProperty.call(EN_MESSAGES, key) ? (key as MessageKey) : undefined;
}

/**
 * The params a `problem.<code>` message may interpolate: the server's `detail` and the problem's scalar members
 * (e.g. `limit`, `member`, `name`).
 */
export function problemMessageParams(problem: unknown): MessageParams {
  const params: MessageParams = {};
  if (!isRecord(problem)) return params;
  for (const [name, value] of Object.entries(problem)) {
    if (typeof value === 'string' || typeof value === 'number') params[name] = value;
  }
  return params;
}

/** What `t` the localizer needs (the I18n service). */
export interface ProblemTranslator {
  t(key: MessageKey, params?: MessageParams): string;
}

/**
 * The message of a server error in the console's language: `problem.<code>.<reason>` when the problem names a known
 * finer `reason`, else `problem.<code>`; undefined when the code is unknown or the message needs a member the server
 * did not send (e.g. a blank `detail`): the caller then shows the server's `detail`.
 */
export function localizeProblem(i18n: ProblemTranslator, code: string, problem: unknown): string | undefined {
  const params = problemMessageParams(problem);
  // a finer cause (`reason`, e.g. a ZIP import rule) has its own message; else the code's
  const reason = params['reason'];
  const key = (typeof reason === 'string' ? problemMessageKey(`${code}.${reason}`) : undefined) ?? problemMessageKey(code);
  if (key === undefined) return undefined;
  // every placeholder of the message must be filled (a detail-based message needs a non-blank detail)
  const placeholders = (i18n.t(key).match(/\{\w+\}/g) ?? []).map((p) => p.slice(1, -1));
  const missing = placeholders.some((name) => params[name] === undefined || String(params[name]).trim() === '');
  return missing ? undefined : i18n.t(key, params);
}
