import { ChangeDetectionStrategy, Component, DestroyRef, computed, inject, signal } from '@angular/core';
import { MatButtonModule } from '@angular/material/button';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';
import { MatSnackBar } from '@angular/material/snack-bar';
import {
  TOOL_RISKS,
  type ApprovalAuditEntry,
  type ExecSandboxMode,
  type StandingRule,
  type ToolRisk,
} from '@cashcode/contracts';

import { ApprovalNotifier } from '../../core/approvals/approval-notifier';
import { ExecSandbox } from '../../core/approvals/exec-sandbox';
import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { Banner } from '../../shared/banner/banner';
import { Icon } from '../../shared/icon/icon';
import { ListSkeleton } from '../../shared/list-skeleton/list-skeleton';
import { PageHeader } from '../../shared/page-header/page-header';
import { relativeTime } from '../../shared/relative-time';
import { AUDIT_PAGE_SIZE, ToolPoliciesStore } from '../tool-policies-store';
import { pageRange, scopeParams, type PolicyChoice } from '../tool-policies-view';
import { browserLine, BrowserStatusSource } from '../browser-status';
import { PolicySelect } from './policy-select';

/**
 * Settings → Tools & approvals: the exec sandbox status, whether the browser tool is offered, browser notifications, the default policy per risk class,
 * the policy per built-in tool (grouped by risk) and per MCP server and tool, the standing rules with Revoke, and the
 * approval audit log page by page. A changed select is saved at once.
 */
@Component({
  selector: 'cc-tool-policies-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatProgressSpinnerModule, Banner, Icon, ListSkeleton, PageHeader, PolicySelect],
  providers: [ToolPoliciesStore],
  templateUrl: './tool-policies-page.html',
  styleUrl: './tool-policies-page.scss',
})
export class ToolPoliciesPage {
  protected readonly store = inject(ToolPoliciesStore);
  protected readonly i18n = inject(I18n);
  protected readonly sandbox = inject(ExecSandbox);
  private readonly browser = inject(BrowserStatusSource);
  /** read-only: whether the browser tool is offered and how Chromium is confined */
  protected readonly browserLine = computed(() => browserLine(this.browser.status() ?? undefined));
  protected readonly notifier = inject(ApprovalNotifier);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly risks = TOOL_RISKS;
  private readonly now = signal(Date.now());

  protected readonly auditRange = computed(() => {
    const audit = this.store.audit();
    return audit ? pageRange(audit.offset, audit.entries.length, audit.total) : null;
  });
  protected readonly hasPrevious = computed(() => (this.store.audit()?.offset ?? 0) > 0);
  protected readonly hasNext = computed(() => {
    const audit = this.store.audit();
    return audit !== null && audit.offset + audit.entries.length < audit.total;
  });

  constructor() {
    void this.refresh();
    const timer = setInterval(() => this.now.set(Date.now()), 30_000);
    inject(DestroyRef).onDestroy(() => clearInterval(timer));
  }

  protected refresh(): Promise<unknown> {
    return Promise.all([this.store.load(), this.store.loadAudit(), this.sandbox.load(true), this.browser.load()]);
  }

  protected riskLabel(risk: ToolRisk): string {
    return this.i18n.t(`risk.${risk}` as MessageKey);
  }

  protected riskHint(risk: ToolRisk): string {
    return this.i18n.t(`toolPolicies.riskHint.${risk}`);
  }

  protected modeLabel(mode: ExecSandboxMode): string {
    return this.i18n.t(`toolPolicies.sandbox.mode.${mode}`);
  }

  protected async onDefault(risk: ToolRisk, choice: PolicyChoice): Promise<void> {
    if (choice === 'inherit') return;
    this.announce(await this.store.setDefault(risk, choice));
  }

  protected async onTool(key: string, choice: PolicyChoice): Promise<void> {
    this.announce(await this.store.setTool(key, choice));
  }

  protected async onServer(server: string, choice: PolicyChoice): Promise<void> {
    this.announce(await this.store.setServer(server, choice));
  }

  protected scope(rule: StandingRule): string {
    return this.i18n.t(`toolPolicies.rules.scope.${rule.scope.kind}` as MessageKey, scopeParams(rule.scope));
  }

  protected created(rule: StandingRule): string {
    return this.i18n.t('toolPolicies.rules.created', {
      time: relativeTime(rule.created_at, this.now(), (key, params) => this.i18n.t(key, params), this.i18n.locale()),
    });
  }

  protected absolute(iso: string): string {
    const time = Date.parse(iso);
    if (Number.isNaN(time)) return iso;
    return new Intl.DateTimeFormat(this.i18n.locale(), { dateStyle: 'medium', timeStyle: 'medium' }).format(time);
  }

  protected async revoke(rule: StandingRule): Promise<void> {
    const scope = this.scope(rule);
    if (await this.store.revoke(rule)) this.snackBar.open(this.i18n.t('toolPolicies.rules.revoked', { scope }), undefined, { duration: 4000 });
  }

  protected decisionLabel(entry: ApprovalAuditEntry): string {
    return this.i18n.t(`toolPolicies.decision.${entry.decision}`);
  }

  protected byLabel(entry: ApprovalAuditEntry): string {
    return this.i18n.t(`toolPolicies.by.${entry.by}`);
  }

  protected page(direction: -1 | 1): void {
    const offset = (this.store.audit()?.offset ?? 0) + direction * AUDIT_PAGE_SIZE;
    void this.store.loadAudit(Math.max(0, offset));
  }

  private announce(saved: boolean): void {
    if (saved) this.snackBar.open(this.i18n.t('toolPolicies.saved'), undefined, { duration: 2000 });
  }
}
