import { Directive, type OnChanges, inject, input } from '@angular/core';
import { MatInput } from '@angular/material/input';

/**
 * Drives a matInput's error state from a message (no forms module): the form field shows its <mat-error>
 * while the message is set.
 */
@Directive({ selector: 'input[matInput][ccFieldError]' })
export class FieldError implements OnChanges {
  readonly ccFieldError = input<string | null>(null);
  private readonly matInput = inject(MatInput);

  ngOnChanges(): void {
    const invalid = this.ccFieldError() !== null;
    if (this.matInput.errorState !== invalid) {
      this.matInput.errorState = invalid;
      this.matInput.stateChanges.next();
    }
  }
}
