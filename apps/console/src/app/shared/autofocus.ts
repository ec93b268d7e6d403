import { Directive, ElementRef, afterNextRender, inject } from '@angular/core';

/** Focuses (and selects the text of) its input once it is rendered. */
@Directive({ selector: 'input[ccAutofocus], textarea[ccAutofocus]' })
export class Autofocus {
  constructor() {
    const element = inject<ElementRef<HTMLInputElement | HTMLTextAreaElement>>(ElementRef).nativeElement;
    afterNextRender(() => {
      element.focus();
      element.select();
    });
  }
}
