/**
 * Turns completed turns into evidence and, when a workflow recurs, into a Skill proposal. Listens to the
 * turn-completed event and works off the turn's critical path: the listener only queues the turn (a bounded queue);
 * at most SKILL_EVOLUTION_MAX_CONCURRENT evaluations run at once. Every evaluation ends with a
 * `skill_evolution.evaluated` event (tests and the log wait on it). Proposals are never applied here.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional } from '@nestjs/common';
import type { LlmSelection, SkillEvolutionProposal } from '@cashcode/contracts';
import { logIds, type LogIds } from '../common/log-context';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import {
  SKILL_EVOLUTION_EVALUATED_EVENT,
  TURN_COMPLETED_EVENT,
  type EvaluationFinishedEvent,
  type TurnCompletedEvent,
} from '../events/app-events';
import { AppEventBus, OnAppEvent } from '../events/event-bus';
import { buildEvidence, evidenceSkipReason, type EvidenceSkipReason } from './evidence';
import { EvidenceStore } from './evidence-store';
import { EVOLUTION_SKILLS, type EvolutionSkillsPort } from './evolution-skills.port';
import { buildEvolverRequest, Evolver, EvolverCallError, parseEvolverReply } from './evolver';
import { validateCandidate } from './candidate-validation';
import { ProposalStore } from './proposal-store';

/** Turns waiting for evaluation beyond this are dropped (logged): evolution must never pile up work. */
export const EVALUATION_QUEUE_MAX = 100;
/** Existing Skills summarised for the evolver (the first 80 records). */
const SKILL_SUMMARY_LIMIT = 80;

/** The log ids of the turn an evaluation is about. */
function turnLogIds(event: { chatId: string; turnId: string }): LogIds {
  return logIds({ chatId: event.chatId, turnId: event.turnId });
}

@Injectable()
export class EvolutionEvaluator implements OnApplicationShutdown {
  private readonly logger = new Logger(EvolutionEvaluator.name);
  private readonly queue: TurnCompletedEvent[] = [];
  private readonly running = new Set<Promise<void>>();
  /** fingerprints whose proposal is being generated right now */
  private readonly generating = new Set<string>();
  private readonly shutdown = new AbortController();
  private idleWaiters: Array<() => void> = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly evidence: EvidenceStore,
    private readonly proposals: ProposalStore,
    private readonly evolver: Evolver,
    private readonly events: AppEventBus,
    @Optional() @Inject(EVOLUTION_SKILLS) private readonly skills: EvolutionSkillsPort | null,
  ) {}

  /** Queues the turn; returns at once (never awaited by the turn). */
  @OnAppEvent(TURN_COMPLETED_EVENT)
  onTurnCompleted(event: TurnCompletedEvent): void {
    if (this.shutdown.signal.aborted) return;
    const skip = evidenceSkipReason(event, {
      enabled: this.config.skillEvolutionEnabled,
      minToolCalls: this.config.skillEvolutionMinToolCalls,
    });
    if (skip) {
      this.finishSkipped(event, skip);
      return;
    }
    if (this.queue.length >= EVALUATION_QUEUE_MAX) {
      this.logger.warn(
        formatEvent('skill_evolution.turn.dropped', { reason: 'queue_full', queued: this.queue.length }),
        turnLogIds(event),
      );
      this.finish({ chatId: event.chatId, turnId: event.turnId, outcome: 'skipped', reason: 'queue_full' });
      return;
    }
    this.queue.push(event);
    setImmediate(() => this.pump());
  }

  /** Resolves when no evaluation is queued or running. */
  whenIdle(): Promise<void> {
    if (this.queue.length === 0 && this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutdown.abort();
    this.queue.length = 0;
    await Promise.allSettled([...this.running]);
  }

  /**
   * Evaluates one completed turn that passed the evidence rules: records the evidence, and proposes a Skill when its
   * fingerprint has recurred SKILL_EVOLUTION_RECURRENCE times and no pending or applied proposal has it.
   */
  async evaluate(event: TurnCompletedEvent): Promise<EvaluationFinishedEvent> {
    const base = { chatId: event.chatId, turnId: event.turnId };
    const record = buildEvidence(event, new Date());
    await this.evidence.add(record);
    const recorded = { ...base, fingerprint: record.fingerprint, evidenceId: record.id };
    this.logger.debug(
      formatEvent('skill_evolution.evidence.recorded', { fingerprint: record.fingerprint, tools: record.tools.length }),
      turnLogIds(event),
    );
    const ids = await this.evidence.idsWithFingerprint(record.fingerprint);
    if (ids.length < this.config.skillEvolutionRecurrence) {
      return { ...recorded, outcome: 'recorded', reason: 'not_recurring' };
    }
    if (this.generating.has(record.fingerprint)) return { ...recorded, outcome: 'recorded', reason: 'in_progress' };
    if (await this.proposals.hasOpenWithFingerprint(record.fingerprint)) {
      return { ...recorded, outcome: 'recorded', reason: 'proposal_exists' };
    }
    this.generating.add(record.fingerprint);
    try {
      const evidenceIds = ids.slice(-this.config.skillEvolutionRecurrence);
      return { ...recorded, ...(await this.propose(record.fingerprint, evidenceIds, event)) };
    } finally {
      this.generating.delete(record.fingerprint);
    }
  }

  private async propose(
    fingerprint: string,
    evidenceIds: string[],
    event: TurnCompletedEvent,
  ): Promise<Pick<EvaluationFinishedEvent, 'outcome' | 'reason' | 'proposalId'>> {
    const selection: LlmSelection = { provider: event.provider, model: event.model };
    const evidence = await this.evidence.readMany(evidenceIds);
    const [skills, contract] = this.skills
      ? await Promise.all([this.skills.summaries(SKILL_SUMMARY_LIMIT), this.skills.creatorContract()])
      : [[], null];
    const request = buildEvolverRequest({
      contract,
      skills,
      evidence,
      maxChars: this.config.skillEvolutionMaxContextChars,
    });
    let reply: string;
    try {
      reply = await this.evolver.complete(selection, request, this.shutdown.signal, event.chatId);
    } catch (error) {
      if (!(error instanceof EvolverCallError)) throw error;
      this.logger.warn(
        formatEvent('skill_evolution.proposal.discarded', { reason: 'model_error', error_kind: error.kind }),
        turnLogIds(event),
      );
      return { outcome: 'discarded', reason: 'model_error' };
    }
    const parsed = parseEvolverReply(reply);
    if (!parsed.ok) {
      this.logger.warn(
        formatEvent('skill_evolution.proposal.discarded', { reason: 'invalid_reply', detail: parsed.reason, model: selection.model }),
        turnLogIds(event),
      );
      return { outcome: 'discarded', reason: 'invalid_reply' };
    }
    const draft = parsed.draft;
    const target = this.skills ? await this.skills.find(draft.name) : null;
    if (draft.action === 'update' && target?.source !== 'agent') {
      this.logger.warn(formatEvent('skill_evolution.proposal.discarded', { reason: 'update_target_not_agent' }), turnLogIds(event));
      return { outcome: 'discarded', reason: 'update_target_not_agent' };
    }
    if (draft.action === 'create' && target) {
      this.logger.warn(formatEvent('skill_evolution.proposal.discarded', { reason: 'name_taken' }), turnLogIds(event));
      return { outcome: 'discarded', reason: 'name_taken' };
    }
    // a proposal for this fingerprint may have been created meanwhile (e.g. by an evaluation of another process)
    if (await this.proposals.hasOpenWithFingerprint(fingerprint)) return { outcome: 'recorded', reason: 'proposal_exists' };
    const now = new Date().toISOString();
    const proposal: SkillEvolutionProposal = {
      id: randomUUID().replace(/-/g, ''),
      action: draft.action,
      name: draft.name,
      candidate_content: draft.candidate_content,
      reason: draft.reason,
      evidence_ids: evidence.map((record) => record.id),
      base_hash: draft.action === 'update' && target ? target.hash : null,
      status: 'pending',
      validation: validateCandidate(draft.candidate_content, draft.name),
      created_at: now,
      updated_at: now,
      applied_version: null,
      fingerprint,
      model: selection,
    };
    await this.proposals.save(proposal);
    this.logger.log(
      formatEvent('skill_evolution.proposal.created', {
        proposal_id: proposal.id,
        action: proposal.action,
        name: proposal.name,
        valid: proposal.validation.valid,
      }),
      turnLogIds(event),
    );
    return { outcome: 'proposed', proposalId: proposal.id };
  }

  private pump(): void {
    while (!this.shutdown.signal.aborted && this.running.size < this.config.skillEvolutionMaxConcurrent) {
      const event = this.queue.shift();
      if (!event) break;
      const job: Promise<void> = this.run(event).finally(() => {
        this.running.delete(job);
        this.pump();
        this.notifyIdle();
      });
      this.running.add(job);
    }
    this.notifyIdle();
  }

  private async run(event: TurnCompletedEvent): Promise<void> {
    let finished: EvaluationFinishedEvent;
    try {
      finished = await this.evaluate(event);
    } catch (error) {
      this.logger.error(
        formatEvent('skill_evolution.evaluation.failed', { error_type: error instanceof Error ? error.name : typeof error }),
        turnLogIds(event),
      );
      finished = { chatId: event.chatId, turnId: event.turnId, outcome: 'failed' };
    }
    this.finish(finished);
  }

  private finishSkipped(event: TurnCompletedEvent, reason: EvidenceSkipReason): void {
    this.logger.debug(formatEvent('skill_evolution.turn.skipped', { reason }), turnLogIds(event));
    this.finish({ chatId: event.chatId, turnId: event.turnId, outcome: 'skipped', reason });
  }

  private finish(event: EvaluationFinishedEvent): void {
    try {
      this.events.emit(SKILL_EVOLUTION_EVALUATED_EVENT, event);
    } catch (error) {
      this.logger.error(
        formatEvent('skill_evolution.listener_failed', { error_type: error instanceof Error ? error.name : typeof error }),
        turnLogIds(event),
      );
    }
  }

  private notifyIdle(): void {
    if (this.queue.length > 0 || this.running.size > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
