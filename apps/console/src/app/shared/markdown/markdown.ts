import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, computed, inject, input } from '@angular/core';
import { DomSanitizer, type SafeHtml } from '@angular/platform-browser';

import { I18n } from '../../core/i18n/i18n';
import { renderMarkdown } from './markdown-renderer';

/**
 * Renders assistant Markdown. The HTML is produced by marked and sanitised by DOMPurify (markdown-renderer.ts),
 * so Angular's own sanitiser is bypassed for it; code blocks get a copy button (event delegation).
 */
@Component({
  selector: 'cc-markdown',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `<div class="cc-markdown" [class.cc-streaming]="streaming()" [innerHTML]="html()"></div>`,
  host: { '(click)': 'onClick($event)' },
})
export class Markdown {
  readonly content = input.required<string>();
  readonly streaming = input(false);

  private readonly i18n = inject(I18n);
  private readonly sanitizer = inject(DomSanitizer);
  private readonly document = inject(DOCUMENT);

  protected readonly html = computed<SafeHtml>(() => {
    const origin = this.document.location?.origin ?? 'http://localhost';
    const rendered = renderMarkdown(this.content(), {
      origin,
      labels: { copyCode: this.i18n.t('chat.copyCode'), imageBlocked: this.i18n.t('chat.imageBlocked') },
    });
    return this.sanitizer.bypassSecurityTrustHtml(rendered);
  });

  protected onClick(event: MouseEvent): void {
    const target = event.target;
    if (!(target instanceof Element)) return;
    const button = target.closest('button[data-copy-code]');
    if (!(button instanceof HTMLButtonElement)) return;
    const code = button.closest('.cc-code')?.querySelector('pre code')?.textContent ?? '';
    void this.copy(code, button);
  }

  private async copy(text: string, button: HTMLButtonElement): Promise<void> {
    try {
      await this.document.defaultView?.navigator.clipboard.writeText(text);
    } catch {
      return;
    }
    const original = button.textContent;
    button.textContent = this.i18n.t('chat.copied');
    button.classList.add('cc-copied');
    setTimeout(() => {
      button.textContent = original;
      button.classList.remove('cc-copied');
    }, 2000);
  }
}
