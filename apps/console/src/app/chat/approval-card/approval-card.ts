import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  ElementRef,
  afterNextRender,
  computed,
  effect,
  inject,
  input,
  signal,
} from '@angular/core';
import { NgTemplateOutlet } from '@angular/common';
import { MatButtonModule } from '@angular/material/button';
import type { ApprovalDecision } from '@cashcode/contracts';

import { formatDueTime } from '../../automations/automation-time';
import { ApprovalNotifier } from '../../core/approvals/approval-notifier';
import { ExecSandbox } from '../../core/approvals/exec-sandbox';
import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Icon } from '../../shared/icon/icon';
import type { IconName } from '../../shared/icon/icon-paths';
import {
  approvalArguments,
  approvalOutcome,
  formatCountdown,
  scopeLabel,
  secondsLeft,
  type ApprovalOutcome,
  type ApprovalState,
} from '../approval-state';
import { ChatStore } from '../chat-store';
import { exactSegments, hasHiddenCharacters } from './exact-text';

const OUTCOME_ICONS: Record<ApprovalOutcome, IconName> = {
  allowedOnce: 'checkCircle',
  allowedAlways: 'checkCircle',
  allowedByPolicy: 'checkCircle',
  deniedByUser: 'block',
  deniedByPolicy: 'block',
  expired: 'timer',
  cancelled: 'cancel',
};

export type SandboxLine =
  | { kind: 'sandboxed'; detail: string | null }
  | { kind: 'unconfined'; reason: string | null }
  | { kind: 'checking' }
  | { kind: 'unknown'; detail: string };

let nextCardId = 0;

/** True when the focus is in a field the user is typing in (moving it away would lose their place). */
function typingElsewhere(document: Document): boolean {
  const active = document.activeElement as HTMLElement | null;
  if (!active) return false;
  if (active.isContentEditable) return true;
  const editable = active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement || active instanceof HTMLSelectElement;
  if (!editable || (active as HTMLInputElement).disabled) return false;
  // the composer stays enabled while an answer streams: only text being typed there keeps the focus
  return !(active instanceof HTMLTextAreaElement && active.value === '');
}

/**
 * A tool call waiting for the user, inline in the running turn: the tool, its risk, the exact command or arguments
 * (never cut or redacted; invisible characters shown as badges, each separate command of an exec line marked), for exec whether it runs sandboxed or UNCONFINED, a countdown to the automatic denial, and Allow
 * once / Always allow (with the rule's scope; only when the server offers one, else it would mean allow once) / Deny. Focus moves to the card when it appears. Once settled the card
 * shows the outcome instead of the buttons.
 */
@Component({
  selector: 'cc-approval-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, Icon, NgTemplateOutlet],
  templateUrl: './approval-card.html',
  styleUrl: './approval-card.scss',
  host: {
    '[attr.data-call-id]': 'approval().callId',
    '[attr.data-state]': "pending() ? 'pending' : 'settled'",
    '[attr.data-outcome]': 'outcome()',
  },
})
export class ApprovalCard {
  readonly approval = input.required<ApprovalState>();

  protected readonly i18n = inject(I18n);
  protected readonly notifier = inject(ApprovalNotifier);
  private readonly store = inject(ChatStore);
  private readonly sandbox = inject(ExecSandbox);
  private readonly host = inject<ElementRef<HTMLElement>>(ElementRef);

  protected readonly id = `cc-approval-${++nextCardId}`;
  private readonly now = signal(Date.now());
  protected readonly notConnected = signal(false);
  protected readonly notifyAsked = signal(false);

  protected readonly pending = computed(() => this.approval().resolution === null);
  protected readonly outcome = computed(() => {
    const resolution = this.approval().resolution;
    return resolution ? approvalOutcome(resolution) : null;
  });
  protected readonly outcomeLabel = computed(() => {
    const outcome = this.outcome();
    if (outcome === null) return '';
    const scope = this.approval().alwaysScope;
    if (outcome === 'allowedAlways' && scope) return this.i18n.t('approval.outcome.allowedAlwaysScope', { scope: scopeLabel(scope) });
    return this.i18n.t(`approval.outcome.${outcome}` as MessageKey);
  });
  protected readonly outcomeIcon = computed(() => OUTCOME_ICONS[this.outcome() ?? 'cancelled']);
  /** a proposed automation's next runs, in the reader's locale */
  protected nextRuns(times: readonly string[]): string {
    return times.map((time) => formatDueTime(time, this.i18n.locale())).join('; ');
  }
  protected readonly riskLabel = computed(() => this.i18n.t(`risk.${this.approval().risk}` as MessageKey));
  protected readonly args = computed(() => approvalArguments(this.approval()));
  /** the text cut into the commands it runs, every invisible character made visible */
  protected readonly segments = computed(() => {
    const approval = this.approval();
    const args = this.args();
    const spans = args.command && approval.command !== null ? approval.commands : null;
    return exactSegments(args.text, spans, !args.command);
  });
  protected readonly hidden = computed(() => hasHiddenCharacters(this.segments()));
  /** exec: the programs of the separate commands, when the line runs more than one */
  protected readonly programs = computed(() => {
    const commands = this.approval().commands;
    return commands !== null && commands.length > 1 ? commands.map((command) => command.program) : null;
  });
  protected readonly scope = computed(() => {
    const scope = this.approval().alwaysScope;
    return scope ? scopeLabel(scope) : null;
  });
  protected readonly secondsLeft = computed(() => secondsLeft(this.approval().expiresAt, this.now()));
  protected readonly countdown = computed(() => {
    const seconds = this.secondsLeft();
    return seconds === null ? null : formatCountdown(seconds);
  });
  protected readonly urgent = computed(() => (this.secondsLeft() ?? Infinity) <= 30);
  protected readonly sandboxLine = computed<SandboxLine | null>(() => {
    const approval = this.approval();
    if (approval.risk !== 'exec') return null;
    const status = this.sandbox.status();
    if (approval.sandboxed === true || (approval.sandboxed === null && status?.active === true)) {
      if (!status?.active) return { kind: 'sandboxed', detail: null };
      const network = this.i18n.t(status.network ? 'approval.sandboxNetwork' : 'approval.sandboxNoNetwork');
      return { kind: 'sandboxed', detail: this.i18n.t('approval.sandboxedDetail', { kind: status.kind ?? 'bwrap', network }) };
    }
    if (approval.sandboxed === false || status !== null) return { kind: 'unconfined', reason: status && !status.active ? (status.reason ?? null) : null };
    const error = this.sandbox.error();
    return error ? { kind: 'unknown', detail: error } : { kind: 'checking' };
  });
  protected readonly offerNotifications = computed(
    () => this.pending() && this.notifier.permission() === 'default' && !this.notifyAsked(),
  );

  constructor() {
    const destroyRef = inject(DestroyRef);
    let timer: ReturnType<typeof setInterval> | null = null;
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    effect(() => {
      // the countdown ticks only while the card waits
      if (this.pending() && timer === null) {
        this.now.set(Date.now());
        timer = setInterval(() => this.now.set(Date.now()), 1000);
      } else if (!this.pending()) {
        stop();
      }
    });
    effect(() => {
      const approval = this.approval();
      if (approval.risk === 'exec' && approval.sandboxed === null) void this.sandbox.load();
    });
    destroyRef.onDestroy(stop);
    afterNextRender(() => {
      const element = this.host.nativeElement;
      if (!this.pending() || typingElsewhere(element.ownerDocument)) return;
      element.querySelector<HTMLElement>('.cc-approval')?.focus();
    });
  }

  protected decide(decision: ApprovalDecision): void {
    if (this.approval().sent !== null) return;
    const sent = this.store.decide(this.approval().callId, decision);
    this.notConnected.set(!sent);
  }

  protected async enableNotifications(): Promise<void> {
    this.notifyAsked.set(true);
    await this.notifier.requestPermission();
  }
}
