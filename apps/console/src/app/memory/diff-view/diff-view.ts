import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';

import { parseUnifiedDiff } from './diff-lines';

const MARKS = { add: '+', remove: '−', context: ' ', hunk: '', file: '' } as const;

/** Renders a unified diff with added/removed lines highlighted (file headers are not shown). */
@Component({
  selector: 'cc-diff-view',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <pre class="cc-diff" data-testid="diff-view"><code>@for (line of lines(); track $index) {<span class="cc-line" [class]="'cc-' + line.kind"><span class="cc-mark" aria-hidden="true">{{ marks[line.kind] }}</span>{{ line.text }}
</span>}</code></pre>
  `,
  styles: `
    .cc-diff {
      margin: 0;
      padding: 8px 0;
      max-height: 420px;
      overflow: auto;
      border-radius: 12px;
      background: var(--mat-sys-surface-container);
      font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    }
    .cc-line {
      display: block;
      padding: 0 12px;
      white-space: pre-wrap;
      word-break: break-word;
    }
    .cc-mark {
      display: inline-block;
      width: 1.5em;
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-add {
      background: color-mix(in srgb, #22a06b 16%, transparent);
    }
    .cc-remove {
      background: color-mix(in srgb, #e5484d 16%, transparent);
      text-decoration: line-through;
      text-decoration-color: color-mix(in srgb, currentColor 40%, transparent);
    }
    .cc-hunk {
      color: var(--mat-sys-on-surface-variant);
      font-style: italic;
    }
  `,
})
export class DiffView {
  readonly diff = input.required<string>();

  protected readonly marks = MARKS;
  protected readonly lines = computed(() => parseUnifiedDiff(this.diff()).filter((line) => line.kind !== 'file'));
}
