import { ChangeDetectionStrategy, Component, input, output } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatInputModule } from '@angular/material/input';

import { FieldError } from '../field-error';
import { Icon } from '../icon/icon';

/** One editable name/value pair; `id` keeps the row's identity while its name changes. */
export interface KeyValueRow {
  id: number;
  name: string;
  value: string;
}

export interface KeyValueNameChange {
  row: KeyValueRow;
  name: string;
}

export interface KeyValueValueChange {
  row: KeyValueRow;
  value: string;
}

/**
 * An editable list of name/value rows whose values are secrets (HTTP headers, environment variables): a name field, a
 * password field and a remove button per row, an add button under them. The parent owns the rows and their rules; this
 * component only shows them and reports each edit. `testId` names the rows (`<testId>-<index>`) and their fields
 * (`<testId>-name`, `<testId>-value`) for the browser tests.
 */
@Component({
  selector: 'cc-key-value-rows',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatFormFieldModule, MatInputModule, FieldError, Icon],
  template: `
    <fieldset class="cc-kv-rows">
      <legend>{{ legend() }}</legend>
      @if (hint(); as hintText) {
        <p class="cc-hint">{{ hintText }}</p>
      }
      @for (row of rows(); track row.id; let index = $index) {
        <div class="cc-kv-row" [attr.data-testid]="testId() + '-' + index">
          <mat-form-field appearance="outline" class="cc-kv-name">
            <mat-label>{{ nameLabel() }}</mat-label>
            <input
              matInput
              autocomplete="off"
              spellcheck="false"
              [value]="row.name"
              (input)="nameChange.emit({ row, name: inputValue($event) })"
              [ccFieldError]="rowError()(row, 'name')"
              [attr.data-testid]="testId() + '-name'"
            />
            <mat-error>{{ rowError()(row, 'name') }}</mat-error>
          </mat-form-field>
          <mat-form-field appearance="outline" class="cc-kv-value">
            <mat-label>{{ valueLabel() }}</mat-label>
            <input
              matInput
              type="password"
              autocomplete="new-password"
              spellcheck="false"
              [value]="row.value"
              (input)="valueChange.emit({ row, value: inputValue($event) })"
              [ccFieldError]="rowError()(row, 'value')"
              [attr.data-testid]="testId() + '-value'"
            />
            <mat-error>{{ rowError()(row, 'value') }}</mat-error>
          </mat-form-field>
          <button mat-icon-button type="button" (click)="remove.emit(row)" [attr.aria-label]="removeLabel()(row.name)">
            <cc-icon name="close" />
          </button>
        </div>
      }
      @if (listError(); as error) {
        <p class="cc-error">{{ error }}</p>
      }
      <button mat-button type="button" (click)="add.emit()" [disabled]="addDisabled()" [attr.data-testid]="addTestId()">
        <cc-icon name="add" />
        {{ addLabel() }}
      </button>
    </fieldset>
  `,
  styles: `
    :host {
      display: block;
    }

    .cc-kv-rows {
      margin: 4px 0 0;
      padding: 8px 0 0;
      border: 0;

      legend {
        font: var(--mat-sys-title-small);
      }
    }

    .cc-hint {
      margin: 4px 0 8px;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }

    .cc-kv-row {
      display: flex;
      align-items: flex-start;
      gap: 8px;

      button {
        margin-top: 8px;
      }
    }

    .cc-kv-name {
      flex: 2;
    }

    .cc-kv-value {
      flex: 3;
    }

    .cc-error {
      color: var(--mat-sys-error);
      font: var(--mat-sys-body-small);
    }
  `,
})
export class KeyValueRows {
  readonly rows = input.required<readonly KeyValueRow[]>();
  readonly legend = input.required<string>();
  /** shown under the legend (null: none) */
  readonly hint = input<string | null>(null);
  readonly nameLabel = input.required<string>();
  readonly valueLabel = input.required<string>();
  readonly addLabel = input.required<string>();
  /** the remove button's accessible name for a row of this name */
  readonly removeLabel = input.required<(name: string) => string>();
  /** the message under a row's name or value field (null: valid) */
  readonly rowError = input<(row: KeyValueRow, part: 'name' | 'value') => string | null>(() => null);
  /** a message about the list as a whole (null: none) */
  readonly listError = input<string | null>(null);
  readonly addDisabled = input(false);
  readonly testId = input.required<string>();
  readonly addTestId = input.required<string>();

  readonly add = output<void>();
  readonly remove = output<KeyValueRow>();
  readonly nameChange = output<KeyValueNameChange>();
  readonly valueChange = output<KeyValueValueChange>();

  protected inputValue(event: Event): string {
    return (event.target as HTMLInputElement).value;
  }
}
