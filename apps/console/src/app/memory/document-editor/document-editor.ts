import { ChangeDetectionStrategy, Component, inject, input, output } from '@angular/core';
import { TextFieldModule } from '@angular/cdk/text-field';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { Icon } from '../../shared/icon/icon';
import type { DocumentState } from '../memory-store';
import { I18n } from '../../core/i18n/i18n';

/**
 * A Markdown file editor with save, discard and conflict handling: when the server reports that the file changed
 * since it was read, the user either loads the new version (dropping the draft) or overwrites it with the draft.
 */
@Component({
  selector: 'cc-document-editor',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [TextFieldModule, MatButtonModule, MatProgressSpinnerModule, Icon],
  templateUrl: './document-editor.html',
  styleUrl: './document-editor.scss',
})
export class DocumentEditor {
  readonly state = input.required<DocumentState>();
  readonly dirty = input.required<boolean>();
  readonly label = input.required<string>();
  readonly hint = input<string>('');
  readonly placeholder = input<string>('');
  readonly testId = input<string>('document');

  readonly changed = output<string>();
  readonly save = output<void>();
  readonly discard = output<void>();
  readonly overwrite = output<void>();

  protected readonly i18n = inject(I18n);

  protected onInput(event: Event): void {
    this.changed.emit((event.target as HTMLTextAreaElement).value);
  }

  protected onKeydown(event: KeyboardEvent): void {
    if ((event.ctrlKey || event.metaKey) && event.key === 's') {
      event.preventDefault();
      if (this.dirty() && !this.state().saving) this.save.emit();
    }
  }
}
