import type { MessageKey } from '../i18n/i18n';

/**
 * Problem `code`s whose server `detail` is a fixed sentence, mapped to the console's translation of it. Codes shared
 * by several situations (e.g. `conflict`, `validation`) are not listed: their `detail` says more than the code.
 */
const PROBLEM_MESSAGE_KEYS: Readonly<Record<string, MessageKey>> = {
  invalid_chat_id: 'problem.invalid_chat_id',
  session_not_found: 'problem.session_not_found',
  memory_conflict: 'problem.memory_conflict',
  soul_conflict: 'problem.soul_conflict',
  dream_running: 'problem.dream_running',
  dream_run_not_found: 'problem.dream_run_not_found',
  dream_run_not_revertible: 'problem.dream_run_not_revertible',
  dream_snapshot_missing: 'problem.dream_snapshot_missing',
  proposal_not_found: 'problem.proposal_not_found',
  proposal_not_pending: 'problem.proposal_not_pending',
  settings_unreadable: 'problem.settings_unreadable',
  settings_save_failed: 'problem.settings_save_failed',
  no_provider_ready: 'problem.no_provider_ready',
  llm_not_configured: 'problem.llm_not_configured',
};

/** The translation key of a known problem code, or undefined (then the server's `detail` is shown). */
export function problemMessageKey(code: string): MessageKey | undefined {
  return Object.prototype.hasOwnProperty.call(PROBLEM_MESSAGE_KEYS, code) ? PROBLEM_MESSAGE_KEYS[code] : undefined;
}
