import { Injectable, computed, inject, signal } from '@angular/core';
import type { SkillEvolutionProposal, SkillEvolutionProposalDetail } from '@cashcode/contracts';

import { errorMessage } from '../core/api/api-error';
import { EvolutionApi } from './evolution-api';
import { sortProposals } from './evolution-view';

export type ReviewAction = 'approve' | 'reject';

/** State of the Evolution view: the proposals, the one under review with its detail, and the running action. */
@Injectable()
export class EvolutionStore {
  private readonly api = inject(EvolutionApi);

  private readonly items = signal<SkillEvolutionProposal[]>([]);
  private readonly enabledFlag = signal(true);
  private readonly loadingFlag = signal(true);
  private readonly loadFailure = signal<string | null>(null);
  private readonly openId = signal<string | null>(null);
  private readonly detailValue = signal<SkillEvolutionProposalDetail | null>(null);
  private readonly detailFailure = signal<string | null>(null);
  private readonly running = signal<ReviewAction | null>(null);
  private readonly actionFailure = signal<string | null>(null);

  readonly proposals = computed(() => sortProposals(this.items()));
  readonly enabled = this.enabledFlag.asReadonly();
  readonly loading = this.loadingFlag.asReadonly();
  readonly loadError = this.loadFailure.asReadonly();
  readonly selectedId = this.openId.asReadonly();
  readonly detail = this.detailValue.asReadonly();
  readonly detailError = this.detailFailure.asReadonly();
  readonly pendingAction = this.running.asReadonly();
  readonly actionError = this.actionFailure.asReadonly();

  async load(): Promise<void> {
    this.loadFailure.set(null);
    if (this.items().length === 0) this.loadingFlag.set(true);
    try {
      const list = await this.api.list();
      this.items.set(list.items);
      this.enabledFlag.set(list.enabled);
    } catch (error) {
      this.loadFailure.set(errorMessage(error));
    } finally {
      this.loadingFlag.set(false);
    }
  }

  /** Opens a proposal for review (or closes it when it is already open). */
  async toggle(id: string): Promise<void> {
    if (this.openId() === id) {
      this.openId.set(null);
      this.detailValue.set(null);
      return;
    }
    this.openId.set(id);
    this.detailValue.set(null);
    this.actionFailure.set(null);
    await this.loadDetail(id);
  }

  /** Approves or rejects the open proposal; true on success. The list and the detail are reloaded either way. */
  async review(action: ReviewAction): Promise<boolean> {
    const id = this.openId();
    if (!id || this.running()) return false;
    this.running.set(action);
    this.actionFailure.set(null);
    let ok = false;
    try {
      if (action === 'approve') await this.api.approve(id);
      else await this.api.reject(id);
      ok = true;
    } catch (error) {
      this.actionFailure.set(errorMessage(error));
    } finally {
      this.running.set(null);
    }
    await Promise.all([this.load(), this.loadDetail(id)]);
    return ok;
  }

  private async loadDetail(id: string): Promise<void> {
    this.detailFailure.set(null);
    try {
      const detail = await this.api.get(id);
      if (this.openId() === id) this.detailValue.set(detail);
    } catch (error) {
      if (this.openId() === id) this.detailFailure.set(errorMessage(error));
    }
  }
}
