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
 * The message of a server error in the console's language, or undefined when the code is unknown (or its message
 * needs a `detail` the server did not send): the caller then shows the server's `detail`.
 */
export function localizeProblem(i18n: ProblemTranslator, code: string, problem: unknown): string | undefined {
  const key = problemMessageKey(code);
  if (key === undefined) return undefined;
  const params = problemMessageParams(problem);
  const detail = params['detail'];
  const needsDetail = i18n.t(key).includes('{detail}');
  if (needsDetail && (typeof detail !== 'string' || detail.trim() === '')) return undefined;
  return i18n.t(key, params);
}
