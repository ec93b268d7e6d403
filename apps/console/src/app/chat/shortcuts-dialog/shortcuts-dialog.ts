import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatDialogModule } from '@angular/material/dialog';

import { I18n } from '../../core/i18n/i18n';
import { SHORTCUT_LIST } from '../shortcuts';

/** The list of keyboard shortcuts (MatDialog: labelled by its title, focus trapped, Esc closes). */
@Component({
  selector: 'cc-shortcuts-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatDialogModule, MatButtonModule],
  template: `
    <h2 mat-dialog-title id="cc-shortcuts-title">{{ i18n.t('shortcuts.title') }}</h2>
    <mat-dialog-content>
      <dl class="cc-shortcuts" data-testid="shortcuts-list">
        @for (shortcut of shortcuts; track $index) {
          <div class="cc-shortcut">
            <dt>
              @for (key of shortcut.keys; track $index) {
                <kbd>{{ key }}</kbd>
              }
            </dt>
            <dd>{{ i18n.t(shortcut.label) }}</dd>
          </div>
        }
      </dl>
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" mat-dialog-close data-testid="shortcuts-close">{{ i18n.t('shortcuts.close') }}</button>
    </mat-dialog-actions>
  `,
  styles: `
    .cc-shortcuts { margin: 0; display: grid; gap: 8px; }
    .cc-shortcut { display: flex; justify-content: space-between; gap: 24px; }
    dt { display: flex; gap: 4px; }
    dd { margin: 0; }
    kbd { border: 1px solid var(--mat-sys-outline-variant); border-radius: 4px; padding: 0 6px; font-family: inherit; }
  `,
})
export class ShortcutsDialog {
  protected readonly i18n = inject(I18n);
  protected readonly shortcuts = SHORTCUT_LIST;
}
