/**
 * An automation run as the whole console sees it (the shell's notices and the page): the WS `automation_run` event and
 * the wording keys of an outcome. Kept apart from the page's formatting so that the shell does not load `cronstrue`.
 */
import type { AutomationRun, AutomationRunEvent, ServerEvent } from '@cashcode/contracts';

import type { MessageKey } from '../core/i18n/i18n';

/** The translation key of a run outcome. */
export function outcomeKey(outcome: AutomationRun['outcome']): MessageKey {
  return `automations.outcome.${outcome}`;
}

/** Whether a run ended badly (the row and the notification say so). */
export function failedOutcome(outcome: AutomationRun['outcome']): boolean {
  return outcome !== 'ok' && outcome !== 'running' && outcome !== 'skipped';
}

/** The WS `automation_run` event (the console's ServerEvent union does not list it); null for any other event. */
export function automationRunEvent(event: ServerEvent | { event: string }): AutomationRunEvent | null {
  const candidate = event as Partial<AutomationRunEvent> & { event: string };
  if (candidate.event !== 'automation_run' || typeof candidate.run !== 'object' || candidate.run === null) return null;
  if (typeof candidate.run.id !== 'string' || typeof candidate.run.automation_id !== 'string') return null;
  return { event: 'automation_run', type: 'automation_run', run: candidate.run, automation_name: String(candidate.automation_name ?? '') };
}
