import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import type {
  McpServerRecord,
  McpServerResourcesResponse,
  McpServerToolsResponse,
  McpToolRecord,
  ToolPoliciesResponse,
} from '@cashcode/contracts';
import { MatButtonModule } from '@angular/material/button';
import { MAT_DIALOG_DATA, MatDialogModule } from '@angular/material/dialog';
import { MatProgressSpinnerModule } from '@angular/material/progress-spinner';

import { errorMessage } from '../../core/api/api-error';
import { I18n, type MessageKey } from '../../core/i18n/i18n';
import { toolApproval, toolBadges, toolTitle, type McpToolBadge, type ToolApproval } from '../mcp-tool-view';

export interface McpToolsDialogData {
  server: McpServerRecord;
  load(): Promise<McpServerToolsResponse>;
  /** the tool policies (`GET /api/settings/tool-policies`) for each tool's approval; without it the defaults show */
  policies?(): Promise<ToolPoliciesResponse>;
  /** the server's resources (`GET /api/mcp/servers/{name}/resources`); without it no resources section shows */
  resources?(): Promise<McpServerResourcesResponse>;
}

interface ToolRow {
  tool: McpToolRecord;
  title: string | null;
  badges: McpToolBadge[];
  approval: ToolApproval;
}

/**
 * The tools of one server: live (callable) or cached, each with its title, the badges of its declared annotations,
 * what a call does under the tool policies (runs, asks, blocked) and its input schema.
 */
@Component({
  selector: 'cc-mcp-tools-dialog',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButtonModule, MatDialogModule, MatProgressSpinnerModule, RouterLink],
  template: `
    <h2 mat-dialog-title>{{ i18n.t('mcp.toolsPanel.title', { name: data.server.display_name }) }}</h2>
    <mat-dialog-content>
      @if (loading()) {
        <div class="cc-loading"><mat-progress-spinner mode="indeterminate" diameter="28" /></div>
      } @else if (error(); as error) {
        <p class="cc-error" role="alert">{{ i18n.t('mcp.toolsPanel.loadFailed', { detail: error }) }}</p>
      } @else if (tools(); as result) {
        @if (result.source === 'none') {
          <p class="cc-note" data-testid="mcp-tools-none">{{ i18n.t('mcp.toolsPanel.none') }}</p>
        } @else {
          <p class="cc-note" [attr.data-source]="result.source" data-testid="mcp-tools-source">
            {{ i18n.t(result.source === 'live' ? 'mcp.toolsPanel.live' : 'mcp.toolsPanel.cache') }}
          </p>
          <ul class="cc-tools">
            @for (row of rows(); track row.tool.name) {
              @let tool = row.tool;
              <li data-testid="mcp-tool" [attr.data-tool]="tool.original_name">
                <div class="cc-tool-head">
                  @if (row.title; as title) {
                    <span class="cc-tool-title" data-testid="mcp-tool-title">{{ title }}</span>
                  }
                  <code class="cc-tool-name">{{ tool.name }}</code>
                  @if (tool.original_name !== tool.name) {
                    <span class="cc-original">{{ tool.original_name }}</span>
                  }
                </div>
                @if (row.badges.length > 0) {
                  <ul class="cc-badges" [attr.aria-label]="i18n.t('mcp.toolsPanel.hints')" data-testid="mcp-tool-badges">
                    @for (badge of row.badges; track badge) {
                      <li
                        class="cc-badge"
                        [class]="'cc-badge cc-badge-' + badge"
                        [attr.data-badge]="badge"
                        [attr.title]="i18n.t(badgeKey(badge, '.hint'))"
                        data-testid="mcp-tool-badge"
                      >
                        {{ i18n.t(badgeKey(badge)) }}
                      </li>
                    }
                  </ul>
                }
                <p>{{ tool.description || i18n.t('mcp.noDescription') }}</p>
                @if (tool.unavailable_reason === 'task_required') {
                  <p class="cc-note cc-task-only" data-testid="mcp-tool-task-required">{{ i18n.t('mcp.toolsPanel.taskRequired') }}</p>
                }
                <p
                  class="cc-approval"
                  [class]="'cc-approval cc-approval-' + row.approval.policy"
                  [attr.data-policy]="row.approval.policy"
                  [attr.data-source]="row.approval.source"
                  data-testid="mcp-tool-approval"
                >
                  {{ i18n.t(approvalKey(row.approval)) }}
                </p>
                <details>
                  <summary>{{ i18n.t('mcp.toolsPanel.schema') }}</summary>
                  <pre>{{ schemaText(tool.input_schema) }}</pre>
                </details>
              </li>
            }
          </ul>
          @if (resources(); as listed) {
            @if (listed.resources.length > 0) {
              <h3 class="cc-resources-title">{{ i18n.t('mcp.toolsPanel.resources', { count: listed.resources.length }) }}</h3>
              <ul class="cc-resources" data-testid="mcp-resources">
                @for (resource of listed.resources; track resource.uri) {
                  <li data-testid="mcp-resource" [attr.data-uri]="resource.uri">
                    <span class="cc-tool-name">{{ resource.title || resource.name }}</span>
                    <code>{{ resource.uri }}</code>
                    @if (resource.mime_type) {
                      <span class="cc-original">{{ resource.mime_type }}</span>
                    }
                  </li>
                }
              </ul>
              @if (listed.truncated) {
                <p class="cc-note">{{ i18n.t('mcp.toolsPanel.resourcesTruncated') }}</p>
              }
            }
          }
          @if (policiesFailed()) {
            <p class="cc-note" data-testid="mcp-tools-policies-failed">{{ i18n.t('mcp.toolsPanel.policiesUnavailable') }}</p>
          }
          <p class="cc-note cc-policy-note">
            {{ i18n.t('mcp.toolsPanel.policyNote') }}
            <a routerLink="/settings/tools" mat-dialog-close data-testid="mcp-tools-policy-link">{{ i18n.t('mcp.toolsPanel.policyLink') }}</a>
          </p>
        }
      }
    </mat-dialog-content>
    <mat-dialog-actions align="end">
      <button mat-button type="button" mat-dialog-close data-testid="mcp-tools-close">{{ i18n.t('mcp.toolsPanel.close') }}</button>
    </mat-dialog-actions>
  `,
  styles: `
    .cc-loading {
      display: flex;
      justify-content: center;
      padding: 24px;
    }
    .cc-note {
      margin: 0 0 12px;
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-error {
      color: var(--mat-sys-error);
    }
    .cc-tools {
      margin: 0;
      padding: 0;
      list-style: none;
      > li {
        padding: 10px 0;
        border-top: 1px solid var(--mat-sys-outline-variant);
      }
      p {
        margin: 4px 0;
      }
    }
    .cc-tool-head {
      display: flex;
      flex-wrap: wrap;
      align-items: baseline;
      gap: 4px 8px;
    }
    .cc-resources-title {
      font: var(--mat-sys-title-small);
      margin: 16px 0 6px;
    }
    .cc-resources {
      margin: 0 0 12px;
      padding: 0;
      list-style: none;
      > li {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 8px;
        padding: 6px 0;
        border-top: 1px solid var(--mat-sys-outline-variant);
      }
    }
    .cc-tool-title {
      font: var(--mat-sys-title-small);
    }
    .cc-tool-name {
      font-weight: 600;
    }
    .cc-badges {
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      margin: 6px 0 2px;
      padding: 0;
      list-style: none;
    }
    .cc-badge {
      padding: 1px 8px;
      border-radius: 999px;
      font-size: 12px;
      line-height: 20px;
      background: var(--mat-sys-secondary-container);
      color: var(--mat-sys-on-secondary-container);
    }
    .cc-badge-readOnly {
      background: var(--mat-sys-tertiary-container);
      color: var(--mat-sys-on-tertiary-container);
    }
    .cc-badge-destructive {
      background: var(--mat-sys-error-container);
      color: var(--mat-sys-on-error-container);
    }
    .cc-approval {
      font-size: 13px;
      font-weight: 500;
      color: var(--mat-sys-on-surface-variant);
    }
    .cc-approval-allow {
      color: var(--mat-sys-tertiary);
    }
    .cc-approval-deny {
      color: var(--mat-sys-error);
    }
    .cc-policy-note {
      margin: 12px 0 0;
      a {
        color: var(--mat-sys-primary);
      }
    }
    .cc-original {
      margin-left: 8px;
      color: var(--mat-sys-on-surface-variant);
      font-size: 12px;
    }
    pre {
      max-height: 240px;
      overflow: auto;
      padding: 8px;
      border-radius: 8px;
      background: var(--mat-sys-surface-container-highest);
      font-size: 12px;
    }
  `,
})
export class McpToolsDialog {
  protected readonly data = inject<McpToolsDialogData>(MAT_DIALOG_DATA);
  protected readonly i18n = inject(I18n);
  protected readonly loading = signal(true);
  protected readonly error = signal<string | null>(null);
  protected readonly tools = signal<McpServerToolsResponse | null>(null);
  private readonly policies = signal<ToolPoliciesResponse | null>(null);
  protected readonly policiesFailed = signal(false);
  protected readonly resources = signal<McpServerResourcesResponse | null>(null);
  protected readonly rows = computed<ToolRow[]>(() => {
    const result = this.tools();
    if (!result) return [];
    const policies = this.policies();
    return result.tools.map((tool) => ({
      tool,
      title: toolTitle(tool),
      badges: toolBadges(tool),
      approval: toolApproval(this.data.server.name, tool, policies),
    }));
  });

  constructor() {
    void this.load();
  }

  protected schemaText(schema: Record<string, unknown>): string {
    return JSON.stringify(schema, null, 2);
  }

  protected badgeKey(badge: McpToolBadge, suffix: '' | '.hint' = ''): MessageKey {
    return `mcp.badge.${badge}${suffix}`;
  }

  protected approvalKey(approval: ToolApproval): MessageKey {
    return `mcp.approval.${approval.policy}`;
  }

  private async loadPolicies(): Promise<ToolPoliciesResponse | null> {
    if (!this.data.policies) return null;
    try {
      return await this.data.policies();
    } catch {
      this.policiesFailed.set(true);
      return null;
    }
  }

  /** resources are extra: a failure to list them only hides the section */
  private async loadResources(): Promise<McpServerResourcesResponse | null> {
    if (!this.data.resources) return null;
    try {
      return await this.data.resources();
    } catch {
      return null;
    }
  }

  private async load(): Promise<void> {
    try {
      const [tools, policies, resources] = await Promise.all([this.data.load(), this.loadPolicies(), this.loadResources()]);
      this.policies.set(policies);
      this.resources.set(resources);
      this.tools.set(tools);
    } catch (error) {
      this.error.set(errorMessage(error));
    } finally {
      this.loading.set(false);
    }
  }
}
