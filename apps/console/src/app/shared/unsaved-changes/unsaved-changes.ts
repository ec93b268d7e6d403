/**
 * Unsaved edits are never dropped without a word (openspec console "Requirement: Unsaved edits are guarded"): a page
 * with a dirty editor answers `hasUnsavedChanges()`; leaving it through the router asks first (canDeactivate), and
 * closing or reloading the tab gets the browser's own prompt (beforeunload).
 */
import { inject } from '@angular/core';
import { MatDialog } from '@angular/material/dialog';
import type { CanDeactivateFn } from '@angular/router';

import { I18n } from '../../core/i18n/i18n';
import { confirmAction } from '../confirm-dialog/confirm-dialog';

export interface HasUnsavedChanges {
  hasUnsavedChanges(): boolean;
}

/** Asks before discarding unsaved edits; resolves true when there are none or the user chooses to leave. */
export function confirmDiscard(dialog: MatDialog, i18n: I18n): Promise<boolean> {
  return confirmAction(dialog, {
    title: i18n.t('unsaved.title'),
    body: i18n.t('unsaved.body'),
    confirm: i18n.t('unsaved.leave'),
    cancel: i18n.t('unsaved.stay'),
    danger: true,
  });
}

export const unsavedChangesGuard: CanDeactivateFn<HasUnsavedChanges> = (component) => {
  if (!component?.hasUnsavedChanges()) return true;
  return confirmDiscard(inject(MatDialog), inject(I18n));
};

/** The beforeunload handler: asks the browser to confirm when there are unsaved edits. */
export function guardUnload(event: BeforeUnloadEvent, dirty: boolean): void {
  if (!dirty) return;
  event.preventDefault();
  // older Chromium versions still need a returnValue to show the prompt
  event.returnValue = '';
}
