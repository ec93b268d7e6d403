/**
 * Automations (openspec automations): the owner's scheduled prompts, their one timer and their runs.
 * - CRUD: checked input (automation-input.ts), names that must exist (automation-tools.ts); acknowledged = on disk.
 * - Scheduling: every enabled automation's next due time in one AutomationScheduler (one timer). A due time while a run
 *   of the same automation is going is recorded as `skipped` (no overlap).
 * - Start: runs that were going when the server stopped are closed as `cancelled`; an automation whose planned due
 *   time passed while the server was down runs once (`missed: run_once`, trigger `missed`) or records one `skipped`
 *   run (`skip`) — never once per missed due time.
 */
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type {
  Automation,
  AutomationInput,
  AutomationRun,
  AutomationRunsPage,
  AutomationRunTrigger,
  AutomationSource,
  SchedulePreviewResponse,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { checkSchedule, describeSchedule, nextDue, nextDueTimes } from './automation-schedule';
import { parseAutomationInput } from './automation-input';
import type { AutomationDelivery } from './automation-delivery';
import { AutomationRunner, runTime } from './automation-runner';
import type { AutomationScheduler } from './automation-scheduler';
import { AutomationStore, AUTOMATION_ID_PATTERN, type StoredAutomation } from './automation-store';
import { unknownNames, unknownNameText, type AutomationCatalog } from './automation-tools';
import { AutomationError } from './automations.errors';

const MAX_RUNS_PAGE = 200;

export interface AutomationsCore {
  store: AutomationStore;
  scheduler: (onDue: (id: string, due: number) => void) => AutomationScheduler;
  runner: AutomationRunner;
  catalog: AutomationCatalog;
  /** the channels' delivery (absent or null: no channel module, so no target is accepted) */
  delivery?: AutomationDelivery | null;
  now(): number;
  minIntervalSec: number;
}

export class AutomationsService {
  private readonly logger = new Logger('Automations');
  private readonly automations = new Map<string, StoredAutomation>();
  private readonly lastRuns = new Map<string, AutomationRun>();
  /** automation id → its running run */
  private readonly running = new Map<string, AutomationRun>();
  readonly scheduler: AutomationScheduler;
  private saving: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly core: AutomationsCore) {
    this.scheduler = core.scheduler((id, due) => this.onDue(id, due));
  }

  /** Loads the automations, closes interrupted runs, handles missed due times and arms the timer. */
  async start(): Promise<void> {
    const now = this.core.now();
    for (const automation of await this.core.store.load()) this.automations.set(automation.id, automation);
    const missed: StoredAutomation[] = [];
    await Promise.all(
      [...this.automations.values()].map(async (automation) => {
        const runs = await this.core.store.runs(automation.id).catch(() => []);
        for (const [index, run] of runs.entries()) {
          if (run.outcome !== 'running') continue;
          runs[index] = { ...run, outcome: 'cancelled', ended_at: runTime(now), error: 'The server stopped during the run.' };
          await this.core.store.appendRun(runs[index]);
        }
        if (runs[0]) this.lastRuns.set(automation.id, runs[0]);
        if (!automation.enabled) return;
        const planned = automation.next_run_at === null ? null : Date.parse(automation.next_run_at);
        if (planned !== null && planned <= now) missed.push(automation);
      }),
    );
    for (const automation of this.automations.values()) {
      if (!automation.enabled) continue;
      const planned = automation.next_run_at === null ? null : Date.parse(automation.next_run_at);
      const anchor = planned !== null && planned <= now ? planned : Date.parse(automation.anchor_at);
      this.plan(automation, planned !== null && planned <= now ? nextDue(automation.schedule, now, anchor) : planned ?? nextDue(automation.schedule, now, anchor), anchor);
    }
    await this.saveNow();
    for (const automation of missed) {
      if (automation.missed === 'run_once') this.launch(automation, 'missed');
      else void this.core.runner.recordSkipped(automation, 'missed', 'The server was down at the due time; missed runs are skipped for this automation.').then((run) => this.lastRuns.set(automation.id, run));
    }
    this.logger.log(formatEvent('automations.started', { automations: this.automations.size, scheduled: this.scheduler.size, missed: missed.length }));
  }

  stop(): void {
    this.stopped = true;
    this.scheduler.stop();
  }

  list(): Automation[] {
    return [...this.automations.values()].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id)).map((entry) => this.view(entry));
  }

  get(id: string): Automation {
    return this.view(this.find(id));
  }

  /** Checks the body and that every named tool, MCP server and Skill exists. */
  async checkInput(body: unknown): Promise<AutomationInput> {
    const input = parseAutomationInput(body, this.core.minIntervalSec);
    const unknown = await unknownNames(input, this.core.catalog);
    const first = unknown[0];
    if (first) {
      const code = first.field === 'tools' ? 'unknown_tool' : first.field === 'mcp_servers' ? 'unknown_mcp_server' : 'unknown_skill';
      throw new AutomationError(code, unknownNameText(first), unknown.map((entry) => ({ field: entry.field, message: unknownNameText(entry) })));
    }
    const target = input.delivery?.channel;
    if (target) {
      // only a conversation of a sender the owner approved (an automation the agent proposes has none)
      const refused = this.core.delivery ? await this.core.delivery.check(target) : 'No channel is available to deliver to.';
      if (refused !== null) throw new AutomationError('invalid_delivery', `delivery.channel: ${refused}`, [{ field: 'delivery.channel', message: refused }]);
    }
    return input;
  }

  async create(body: unknown, source: AutomationSource = 'owner'): Promise<Automation> {
    const input = await this.checkInput(body);
    const now = this.core.now();
    this.refusePastOnce(input, now);
    const at = runTime(now);
    const automation: StoredAutomation = { ...input, id: `a${randomBytes(8).toString('hex')}`, source, created_at: at, updated_at: at, anchor_at: at, next_run_at: null };
    if (automation.enabled) automation.next_run_at = isoOrNull(nextDue(automation.schedule, now, now));
    await this.persist(() => this.automations.set(automation.id, automation), () => this.automations.delete(automation.id));
    if (automation.enabled) this.plan(automation, toMs(automation.next_run_at), now);
    this.logger.log(formatEvent('automation.created', { automation: automation.id, source, schedule: automation.schedule.kind }));
    return this.view(automation);
  }

  async replace(id: string, body: unknown): Promise<Automation> {
    const before = this.find(id);
    const input = await this.checkInput(body);
    const now = this.core.now();
    const rescheduled = JSON.stringify(input.schedule) !== JSON.stringify(before.schedule) || (input.enabled && !before.enabled);
    if (JSON.stringify(input.schedule) !== JSON.stringify(before.schedule)) this.refusePastOnce(input, now);
    const after: StoredAutomation = { ...before, ...input, updated_at: runTime(now) };
    if (rescheduled) after.anchor_at = runTime(now);
    after.next_run_at = !after.enabled ? null : rescheduled ? isoOrNull(nextDue(after.schedule, now, now)) : before.next_run_at;
    await this.persist(() => this.automations.set(id, after), () => this.automations.set(id, before));
    this.plan(after, after.enabled ? toMs(after.next_run_at) : null, Date.parse(after.anchor_at));
    return this.view(after);
  }

  /** Deletes an automation and its runs; a run that is going is stopped (its chat stays). */
  async delete(id: string): Promise<void> {
    const automation = this.find(id);
    await this.persist(() => this.automations.delete(id), () => this.automations.set(id, automation));
    const running = this.running.get(id)?.chat_id;
    if (running) this.core.runner.cancel(running);
    this.scheduler.remove(id);
    this.lastRuns.delete(id);
    await this.core.store.deleteRuns(id).catch(() => undefined);
  }

  /** Run now: 409 `automation_running` while a run of it is going. */
  async runNow(id: string): Promise<AutomationRun> {
    const automation = this.find(id);
    if (this.running.has(id)) throw new AutomationError('automation_running', `The automation "${automation.name}" is running; wait for its run to end.`);
    return this.launch(automation, 'manual');
  }

  async runs(id: string, limit: number, before: string | null): Promise<AutomationRunsPage> {
    this.find(id);
    const all = await this.core.store.runs(id);
    const size = Math.max(1, Math.min(MAX_RUNS_PAGE, limit));
    const start = before === null ? 0 : all.findIndex((run) => run.id < before);
    const page = start < 0 ? [] : all.slice(start, start + size);
    const more = start >= 0 && start + size < all.length;
    return { runs: page, next_before: more ? (page[page.length - 1]?.id ?? null) : null };
  }

  preview(body: unknown): SchedulePreviewResponse {
    const raw = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['schedule'] : undefined;
    const checked = checkSchedule(raw, this.core.minIntervalSec);
    if (!checked.ok) throw new AutomationError(checked.code, `${checked.errors[0]?.field}: ${checked.errors[0]?.message}`, checked.errors);
    const next = nextDueTimes(checked.schedule, this.core.now(), 5).map((ms) => runTime(ms));
    return { description: describeSchedule(checked.schedule), next };
  }

  /** Whether a run of this automation is going. */
  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** A new `once` date must lie ahead (an unchanged one that has run may stay). */
  private refusePastOnce(input: AutomationInput, now: number): void {
    if (input.schedule.kind === 'once' && nextDue(input.schedule, now, now) === null) {
      const message = 'must be in the future';
      throw new AutomationError('invalid_schedule', `schedule.at: ${message}`, [{ field: 'schedule.at', message }]);
    }
  }

  private onDue(id: string, due: number): void {
    const automation = this.automations.get(id);
    if (!automation || !automation.enabled || this.stopped) return;
    const now = this.core.now();
    const anchor = automation.schedule.kind === 'interval' ? due : Date.parse(automation.anchor_at);
    const next = nextDue(automation.schedule, Math.max(now, due), anchor);
    automation.anchor_at = runTime(anchor);
    automation.next_run_at = isoOrNull(next);
    this.plan(automation, next, anchor);
    this.saveSoon();
    if (this.running.has(id)) {
      void this.core.runner.recordSkipped(automation, 'schedule', 'The previous run was still going at the due time.').then((run) => this.lastRuns.set(id, run));
      return;
    }
    void this.launch(automation, 'schedule').catch(() => undefined);
  }

  private launch(automation: StoredAutomation, trigger: AutomationRunTrigger): Promise<AutomationRun> {
    const { started, ended } = this.core.runner.start(automation, trigger);
    const placeholder = { id: '', outcome: 'running', chat_id: null } as unknown as AutomationRun;
    this.running.set(automation.id, placeholder);
    void ended.then(async (run) => {
      if (this.running.get(automation.id) === placeholder) this.running.delete(automation.id);
      if (this.automations.has(automation.id)) this.lastRuns.set(automation.id, { ...run });
      // deleted while it ran: its last record must not bring the runs file back
      else await this.core.store.deleteRuns(automation.id).catch(() => undefined);
    });
    return started.then((run) => {
      if (this.running.get(automation.id) === placeholder) placeholder.chat_id = run.chat_id;
      if (this.automations.has(automation.id)) this.lastRuns.set(automation.id, { ...run });
      return { ...run };
    });
  }

  private plan(automation: StoredAutomation, due: number | null, anchor: number): void {
    automation.anchor_at = runTime(anchor);
    automation.next_run_at = isoOrNull(due);
    this.scheduler.set(automation.id, automation.enabled ? due : null);
  }

  /** Applies a change, writes the file, and undoes the change when the write fails (nothing half-done). */
  private async persist(apply: () => void, undo: () => void): Promise<void> {
    apply();
    try {
      await this.saveNow();
    } catch (err) {
      undo();
      this.logger.error(formatEvent('automations.save_failed', { error: (err as NodeJS.ErrnoException).code ?? 'error' }));
      throw new AutomationError('automation_save_failed', 'The automations could not be saved; nothing changed. Try again.');
    }
  }

  private saveNow(): Promise<void> {
    return this.core.store.save([...this.automations.values()]);
  }

  /** Scheduling state changes (due times) are written once per tick, whatever number of automations came due. */
  private saveSoon(): void {
    if (this.saving) return;
    this.saving = Promise.resolve().then(async () => {
      this.saving = null;
      await this.saveNow().catch((err: unknown) => this.logger.error(formatEvent('automations.save_failed', { error: (err as NodeJS.ErrnoException).code ?? 'error' })));
    });
  }

  private find(id: string): StoredAutomation {
    const automation = AUTOMATION_ID_PATTERN.test(id) ? this.automations.get(id) : undefined;
    if (!automation) throw new AutomationError('not_found', `No automation has the id ${JSON.stringify(id)}.`);
    return automation;
  }

  private view(automation: StoredAutomation): Automation {
    const { anchor_at: _anchor, ...rest } = automation;
    return structuredClone({ ...rest, last_run: this.lastRuns.get(automation.id) ?? null, running: this.running.has(automation.id) });
  }
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : runTime(ms);
}

function toMs(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso);
}
