/**
 * One automation run (openspec automations "Requirement: A run is a chat turn"): a turn through ChatService.submit in
 * the automation's chat (`auto-<id>`, or `auto-<id>-<run>` per run), with the automation's model, tool allowlist and
 * approvals (`deny`: a headless turn, a call that needs approval is denied at once; `wait`: the approval request waits
 * for the owner up to the approval timeout). The run ends with the turn:
 * - `done` → `ok`; cancelled → `timeout` when its maximum run time stopped it, else `cancelled`;
 * - `error` → `budget_exceeded` / `runaway_stopped` by its code, else `error` with the turn's detail.
 * Its record is appended when it starts and when it ends (tokens and cost from the usage ledger), each announced to
 * every console (`automation_run`); the answer goes to the delivery target when one is configured.
 */
import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { filter, type Subscription } from 'rxjs';
import type { AutomationRun, AutomationRunOutcome, AutomationRunTrigger, LlmSelection, ServerEvent } from '@cashcode/contracts';
import { localIsoWithOffset } from '../common/local-iso-time';
import { formatEvent } from '../common/log-format';
import type { ChatService } from '../chat/chat.service';
import type { AutomationDelivery } from './automation-delivery';
import type { AutomationStore, StoredAutomation } from './automation-store';
import { automationAllowlist, unknownNames, unknownNameText, type AutomationCatalog } from './automation-tools';
import type { RunBudgets } from './run-budgets';

export interface AutomationRunnerDeps {
  chat: ChatService;
  store: AutomationStore;
  budgets: RunBudgets;
  catalog: AutomationCatalog;
  /** the model of an automation without one: the last one used, else the background model */
  defaultModel(): LlmSelection | null;
  delivery: AutomationDelivery | null;
  /** a run started or ended (after its record is on disk) */
  announce(run: AutomationRun, automation: StoredAutomation): void;
  /** a run ended (skipped included): counted in the metrics */
  ended?(run: AutomationRun): void;
  now(): number;
}

/** The chat of an automation's runs. */
export function automationChatId(automation: Pick<StoredAutomation, 'id' | 'chat_mode'>, runId: string): string {
  return automation.chat_mode === 'per_run' ? `auto-${automation.id}-${runId.slice(-8)}` : `auto-${automation.id}`;
}

/** Whether a chat is an automation's (its runs' approval requests also reach the owner on a channel). */
export function isAutomationChat(chatId: string): boolean {
  return chatId.startsWith('auto-');
}

/** Run ids sort by their start: `r`, the start in base 36 (9 digits), 6 random hex digits. */
export function newRunId(now: number): string {
  return `r${now.toString(36).padStart(9, '0')}${randomBytes(3).toString('hex')}`;
}

export function runTime(ms: number): string {
  return localIsoWithOffset(new Date(ms), { millis: true });
}

export class AutomationRunner {
  private readonly logger = new Logger('Automations');

  constructor(private readonly deps: AutomationRunnerDeps) {}

  /** Stops a run's turn (the run then ends `cancelled`). */
  cancel(chatId: string): void {
    this.deps.chat.cancel(chatId);
  }

  /** A run record that did not start a turn (a skipped due time). */
  async recordSkipped(automation: StoredAutomation, trigger: AutomationRunTrigger, reason: string): Promise<AutomationRun> {
    const at = runTime(this.deps.now());
    const run: AutomationRun = {
      id: newRunId(this.deps.now()),
      automation_id: automation.id,
      started_at: at,
      ended_at: at,
      outcome: 'skipped',
      error: reason,
      cost_usd: null,
      tokens: null,
      chat_id: null,
      trigger,
    };
    await this.deps.store.appendRun(run);
    this.deps.announce(run, automation);
    this.deps.ended?.(run);
    return run;
  }

  /** Starts a run; `started` resolves once its first record is on disk, `ended` with its final record. */
  start(automation: StoredAutomation, trigger: AutomationRunTrigger): { started: Promise<AutomationRun>; ended: Promise<AutomationRun> } {
    const id = newRunId(this.deps.now());
    const run: AutomationRun = {
      id,
      automation_id: automation.id,
      started_at: runTime(this.deps.now()),
      ended_at: null,
      outcome: 'running',
      error: null,
      cost_usd: null,
      tokens: null,
      chat_id: automationChatId(automation, id),
      trigger,
    };
    const started = this.deps.store.appendRun(run).then(() => {
      this.deps.announce(run, automation);
      return run;
    });
    const ended = started.then(() => this.execute(automation, run)).catch((err: unknown) => this.finish(automation, run, 'error', `The run failed: ${errorText(err)}`));
    return { started, ended };
  }

  private async execute(automation: StoredAutomation, run: AutomationRun): Promise<AutomationRun> {
    const chatId = run.chat_id as string;
    // a target that is no longer an approved sender: the run does not start, nothing is sent
    const refused = await this.checkTarget(automation);
    if (refused !== null) return this.finish(automation, run, 'error', refused);
    const unknown = await unknownNames(automation, this.deps.catalog);
    if (unknown.length > 0) {
      return this.finishAndDeliver(automation, run, 'error', `${unknown.map(unknownNameText).join(' ')} Edit the automation's tools.`, '');
    }
    const llm = automation.llm ?? this.deps.defaultModel();
    if (!llm) return this.finishAndDeliver(automation, run, 'error', 'No model is configured: choose one in the LLM settings or in the automation.', '');

    const tally = this.deps.budgets.open(chatId, automation.budget);
    let timedOut = false;
    let answer = '';
    let subscription: Subscription | null = null;
    const end = new Promise<{ outcome: AutomationRunOutcome; error: string | null }>((resolve) => {
      subscription = this.deps.chat.events$.pipe(filter((out) => out.chatId === chatId)).subscribe(({ event }) => {
        const settled = turnEnd(event, timedOut);
        if (event.event === 'delta') answer += event.text;
        else if (event.event === 'tool_call') answer = '';
        if (settled) resolve(settled);
      });
    });
    const timer = setTimeout(() => {
      timedOut = true;
      this.deps.chat.cancel(chatId);
    }, automation.max_run_seconds * 1000);
    timer.unref();
    try {
      const metadata = {
        llm,
        ...(automation.mcp_servers && automation.mcp_servers.length > 0
          ? { selected_mcp_connectors: automation.mcp_servers.map((server) => ({ server })) }
          : {}),
      };
      const allowlist = automationAllowlist(automation);
      const submitted = this.deps.chat.submit(chatId, automation.prompt, metadata, [], {
        ...(automation.approvals === 'deny' ? { headless: true } : {}),
        ...(allowlist ? { toolAllowlist: allowlist } : {}),
      });
      if (!submitted.accepted) return await this.finishAndDeliver(automation, run, 'error', submitted.detail, '');
      const result = await end;
      run.tokens = tally.tokens;
      run.cost_usd = tally.calls > 0 ? tally.costUsd : null;
      // the sender may have been revoked while the run went on: then nothing is sent
      const revoked = await this.checkTarget(automation);
      if (revoked !== null) return await this.finish(automation, run, 'error', revoked);
      return await this.finishAndDeliver(automation, run, result.outcome, result.error, answer);
    } finally {
      clearTimeout(timer);
      (subscription as Subscription | null)?.unsubscribe();
      this.deps.budgets.close(chatId);
    }
  }

  private async finish(automation: StoredAutomation, run: AutomationRun, outcome: AutomationRunOutcome, error: string | null): Promise<AutomationRun> {
    run.outcome = outcome;
    run.error = outcome === 'ok' ? null : error;
    run.ended_at = runTime(this.deps.now());
    try {
      await this.deps.store.appendRun(run);
    } catch (err) {
      this.logger.error(formatEvent('automation.run.write_failed', { automation: automation.id, run: run.id, error_type: errorText(err) }));
    }
    this.logger.log(formatEvent('automation.run.ended', { automation: automation.id, run: run.id, outcome, trigger: run.trigger }));
    this.deps.announce(run, automation);
    this.deps.ended?.(run);
    return run;
  }

  /** null when the automation has no delivery target or its target may receive runs; else the run's error. */
  private async checkTarget(automation: StoredAutomation): Promise<string | null> {
    const target = automation.delivery?.channel;
    if (!target) return null;
    if (!this.deps.delivery) return 'No channel is available to deliver to; remove the automation\'s delivery target.';
    const refused = await this.deps.delivery.check(target).catch((err: unknown) => `The delivery target could not be checked: ${errorText(err)}`);
    return refused === null ? null : `${refused} Nothing was sent.`;
  }

  /** Ends the run, then sends its answer (or its outcome in one line) to the delivery target. */
  private async finishAndDeliver(automation: StoredAutomation, run: AutomationRun, outcome: AutomationRunOutcome, error: string | null, answer: string): Promise<AutomationRun> {
    const final = await this.finish(automation, run, outcome, error);
    const target = automation.delivery?.channel;
    if (!target || !this.deps.delivery) return final;
    const text = deliveryText(automation.name, final, answer);
    if (text === null) return final;
    try {
      await this.deps.delivery.deliver(target, text);
      this.logger.log(formatEvent('automation.delivery.sent', { automation: automation.id, run: run.id, channel: target.kind }));
    } catch (err) {
      this.logger.warn(formatEvent('automation.delivery.failed', { automation: automation.id, error_type: errorText(err) }));
    }
    return final;
  }
}

/** What a run delivers: its answer under the automation's name, or its outcome and error in one line. */
export function deliveryText(name: string, run: AutomationRun, answer: string): string | null {
  if (run.outcome === 'ok') return answer.trim() === '' ? null : `**${name}**\n\n${answer.trim()}`;
  const reason = (run.error ?? '').replace(/\s+/g, ' ').trim();
  return `**${name}**: ⚠️ the run ended \`${run.outcome}\`${reason ? ` — ${reason}` : ''}`;
}

/** The run's outcome when this event ends its turn (null: the turn goes on). */
export function turnEnd(event: ServerEvent, timedOut: boolean): { outcome: AutomationRunOutcome; error: string | null } | null {
  if (event.event === 'done') {
    if (!event.cancelled) return { outcome: 'ok', error: null };
    return timedOut
      ? { outcome: 'timeout', error: 'The run took longer than its maximum run time and was stopped.' }
      : { outcome: 'cancelled', error: 'The run was stopped before it finished.' };
  }
  if (event.event !== 'error') return null;
  if (event.code === 'budget_exceeded') return { outcome: 'budget_exceeded', error: event.detail };
  if (event.code === 'runaway_stopped') return { outcome: 'runaway_stopped', error: event.detail };
  return { outcome: 'error', error: event.detail };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
