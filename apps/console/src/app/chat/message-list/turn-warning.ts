import type { MessageKey } from '../../core/i18n/i18n';

/** The i18n key of why a selection was left out of a turn, by the `warning` event's code (unknown codes: generic). */
export function warningReasonKey(code: string): MessageKey {
  switch (code) {
    case 'skill_not_found':
      return 'chat.warning.reason.notFound';
    case 'skill_disabled':
      return 'chat.warning.reason.disabled';
    case 'missing_dependency':
      return 'chat.warning.reason.missingDependency';
    case 'invalid_skill':
      return 'chat.warning.reason.invalid';
    case 'mcp_prepare_failed':
      return 'chat.warning.reason.notConnected';
    default:
      return 'chat.warning.reason.unavailable';
  }
}
