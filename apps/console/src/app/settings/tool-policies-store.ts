import { Injectable, computed, inject, signal } from '@angular/core';
import type {
  ApprovalAuditResponse,
  StandingRule,
  ToolPoliciesResponse,
  ToolPolicy,
  ToolRisk,
  UpdateToolPoliciesRequest,
} from '@cashcode/contracts';

import { errorMessage } from '../core/api/api-error';
import { ToolPoliciesApi } from './tool-policies-api';
import {
  builtinGroups,
  defaultPolicyChange,
  serverGroups,
  serverPolicyChange,
  toolPolicyChange,
  type PolicyChoice,
} from './tool-policies-view';

export const AUDIT_PAGE_SIZE = 20;

export type SaveTarget = `default:${ToolRisk}` | `tool:${string}` | `server:${string}` | `rule:${string}`;

/**
 * State of the Tools & approvals view: the policies (saved as soon as a select changes, one save at a time), the
 * standing rules (revoked one by one) and one page of the approval audit log.
 */
@Injectable()
export class ToolPoliciesStore {
  private readonly api = inject(ToolPoliciesApi);

  private readonly value = signal<ToolPoliciesResponse | null>(null);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly savingTarget = signal<SaveTarget | null>(null);
  private readonly saveFailure = signal<string | null>(null);
  private readonly auditValue = signal<ApprovalAuditResponse | null>(null);
  private readonly auditLoadingFlag = signal(true);
  private readonly auditFailure = signal<string | null>(null);

  readonly policies = this.value.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly saving = this.savingTarget.asReadonly();
  readonly saveError = this.saveFailure.asReadonly();
  readonly audit = this.auditValue.asReadonly();
  readonly auditLoading = this.auditLoadingFlag.asReadonly();
  readonly auditError = this.auditFailure.asReadonly();

  readonly builtin = computed(() => {
    const policies = this.value();
    return policies ? builtinGroups(policies) : [];
  });
  readonly servers = computed(() => {
    const policies = this.value();
    return policies ? serverGroups(policies) : [];
  });
  readonly rules = computed(() =>
    [...(this.value()?.rules ?? [])].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at)),
  );

  async load(): Promise<void> {
    this.loadFailure.set(null);
    if (this.value() === null) this.loadingFlag.set(true);
    try {
      this.value.set(await this.api.get());
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  setDefault(risk: ToolRisk, policy: ToolPolicy): Promise<boolean> {
    const policies = this.value();
    return policies ? this.save(`default:${risk}`, defaultPolicyChange(policies, risk, policy)) : Promise.resolve(false);
  }

  setTool(key: string, choice: PolicyChoice): Promise<boolean> {
    const policies = this.value();
    return policies ? this.save(`tool:${key}`, toolPolicyChange(policies, key, choice)) : Promise.resolve(false);
  }

  setServer(server: string, choice: PolicyChoice): Promise<boolean> {
    const policies = this.value();
    return policies ? this.save(`server:${server}`, serverPolicyChange(policies, server, choice)) : Promise.resolve(false);
  }

  /** Revokes a standing rule; true when it is gone. */
  async revoke(rule: StandingRule): Promise<boolean> {
    if (this.savingTarget() !== null) return false;
    this.savingTarget.set(`rule:${rule.id}`);
    this.saveFailure.set(null);
    try {
      await this.api.revokeRule(rule.id);
      this.value.update((policies) =>
        policies ? { ...policies, rules: policies.rules.filter((entry) => entry.id !== rule.id) } : policies,
      );
      return true;
    } catch (error) {
      this.saveFailure.set(errorMessage(error));
      return false;
    } finally {
      this.savingTarget.set(null);
    }
  }

  async loadAudit(offset = this.auditValue()?.offset ?? 0): Promise<void> {
    this.auditLoadingFlag.set(true);
    this.auditFailure.set(null);
    try {
      this.auditValue.set(await this.api.audit(Math.max(0, offset), AUDIT_PAGE_SIZE));
    } catch (error) {
      this.auditFailure.set(errorMessage(error));
    } finally {
      this.auditLoadingFlag.set(false);
    }
  }

  dismissSaveError(): void {
    this.saveFailure.set(null);
  }

  private async save(target: SaveTarget, request: UpdateToolPoliciesRequest): Promise<boolean> {
    if (this.savingTarget() !== null) return false;
    this.savingTarget.set(target);
    this.saveFailure.set(null);
    try {
      const saved = await this.api.update(request);
      if (saved && Array.isArray(saved.known_tools)) this.value.set(saved);
      else this.value.set(await this.api.get());
      return true;
    } catch (error) {
      this.saveFailure.set(errorMessage(error));
      // the select shows the stored value again
      this.value.update((policies) => (policies ? { ...policies } : policies));
      return false;
    } finally {
      this.savingTarget.set(null);
    }
  }
}
