/**
 * Usage, prices and spend limits (openspec usage): the one service every model call site goes through.
 *
 * - `reserve` before a call: estimates it (prompt tokens ≈ request characters / 4, output = the request's
 *   `max_tokens`, else CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS) and either reserves the estimate or refuses the call
 *   when it would cross a limit (the refusal is recorded, `outcome: refused`). Check and reservation are one
 *   synchronous step, so concurrent turns cannot both pass the edge of a limit (JS runs one of them at a time).
 * - `settle` after the call: writes the ledger record with the provider's usage (else an estimate from the request
 *   and answer sizes, marked `estimated`), priced with the price table, releases the reservation, publishes
 *   `model_call.recorded` and sends `usage_warning` once per limit and window when a limit passes `warn_at`.
 * - Running totals of the current day and month are read from the ledger (so they survive restarts) and kept in
 *   memory, updated by each record; a new day or month reloads them.
 */
import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import {
  type ChatUsage,
  type LlmProvider,
  type ModelCallPurpose,
  type ModelPrice,
  type PriceTable,
  type SpendLimit,
  type SpendLimitSettings,
  type SpendLimitsStatus,
  type SpendLimitStatus,
  type UsageRecord,
  type UsageRecordsPage,
  type UsageSummary,
  type UsageWarningEvent,
} from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MODEL_CALL_RECORDED_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import {
  limitCovers,
  priceCall,
  refusalRecord,
  settledRecord,
  type ModelCallGuard,
  type ModelCallRequest,
  type ModelCallResult,
  type UsageReservation,
} from './usage-call-record';
import { dayBefore, isoWithOffset, localDay, localMonth, serverTimeZone, windowDays, windowResetsAt } from './usage-calendar';

export { limitCovers, priceCall } from './usage-call-record';
export type { ModelCallGuard, ModelCallRequest, ModelCallResult, UsageReservation } from './usage-call-record';
import { SpendLimitError, UsageError } from './usage.errors';
import { roundMoney, UsageLedger, type NewUsageRecord, type RecordsQuery, type UseGroup } from './usage-ledger';
import { DEFAULT_WARN_AT, parseLimitSettings, parsePriceTable, UsageSettingsFiles } from './usage-settings';

/** Characters per estimated token (a common rule of thumb for English text and code; documented in openspec usage). */
export const CHARS_PER_TOKEN = 4;
export const RETENTION_INTERVAL_NAME = 'usage.retention';
const DAY_MS = 86_400_000;

interface WindowCache {
  key: string;
  groups: Map<string, UseGroup>;
}

function groupKey(provider: string, model: string, purpose: string): string {
  return `${provider}\u0000${model}\u0000${purpose}`;
}

@Injectable()
export class UsageService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(UsageService.name);
  private readonly files: UsageSettingsFiles;
  private ledgerInstance: UsageLedger | null = null;
  private priceTable: PriceTable = { prices: [] };
  private priceIndex = new Map<string, ModelPrice>();
  private limitSettings: SpendLimitSettings = { limits: [], warn_at: DEFAULT_WARN_AT };
  private readonly reservations = new Map<number, UsageReservation>();
  private nextReservation = 1;
  private day: WindowCache | null = null;
  private month: WindowCache | null = null;
  /** `<limit id>\u0000<window key>` of the warnings already sent */
  private readonly warned = new Set<string>();
  private savingSettings: Promise<unknown> = Promise.resolve();
  /** checks besides the spend limits (automation run budgets), asked in `reserve` */
  private readonly guards: ModelCallGuard[] = [];
  /** `usage_warning` events for the chat's connections (ChatService forwards them) */
  readonly warnings$ = new Subject<UsageWarningEvent>();
  /** tests move the clock */
  now: () => Date = () => new Date();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: AppEventBus,
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {
    this.files = new UsageSettingsFiles(config.configDir);
  }

  async onModuleInit(): Promise<void> {
    this.ledgerInstance = new UsageLedger(join(this.config.dataDir, 'usage', 'ledger.sqlite'));
    const prices = await this.files.loadPrices().catch(() => ({ ok: false as const, errors: [] }));
    if (prices.ok) this.installPrices(prices.value);
    else this.logger.error(formatEvent('usage.prices.unreadable', { file: this.files.pricesPath, action: 'no_prices' }));
    const limits = await this.files.loadLimits().catch(() => ({ ok: false as const, errors: [] }));
    if (limits.ok) this.limitSettings = limits.value;
    else this.logger.error(formatEvent('usage.limits.unreadable', { file: this.files.limitsPath, action: 'no_limits' }));
    this.pruneRetention();
    if (this.scheduler) {
      const timer = setInterval(() => this.pruneRetention(), DAY_MS);
      timer.unref();
      this.scheduler.addInterval(RETENTION_INTERVAL_NAME, timer);
    }
  }

  /**
   * After every module's onModuleDestroy: turns cancelled by the shutdown settle their calls first, then the ledger
   * closes.
   */
  onApplicationShutdown(): void {
    this.warnings$.complete();
    this.ledgerInstance?.close();
    this.ledgerInstance = null;
  }

  private get ledger(): UsageLedger {
    if (!this.ledgerInstance) throw new Error('the usage ledger is closed');
    return this.ledgerInstance;
  }

  /** Deletes calls older than CASHCODE_USAGE_RETENTION_DAYS (at start and daily). */
  pruneRetention(): number {
    if (!this.ledgerInstance) return 0;
    try {
      const removed = this.ledgerInstance.prune(dayBefore(this.now(), this.config.usageRetentionDays - 1));
      if (removed > 0) this.logger.log(formatEvent('usage.retention.pruned', { calls: removed, days: this.config.usageRetentionDays }));
      this.day = null;
      this.month = null;
      return removed;
    } catch (err) {
      this.logger.error(formatEvent('usage.retention.failed', { error_type: err instanceof Error ? err.name : typeof err }));
      return 0;
    }
  }

  // ---- the guard ------------------------------------------------------------------------------------------------

  /** Estimated prompt tokens of a request of `chars` characters. */
  estimateTokens(chars: number): number {
    return Math.ceil(Math.max(0, chars) / CHARS_PER_TOKEN);
  }

  /**
   * Reserves the call's estimate, or records the refusal and throws SpendLimitError when the call would cross a
   * limit. Synchronous: no other call can pass between the check and the reservation.
   */
  reserve(request: ModelCallRequest): UsageReservation {
    const startedAt = this.now();
    const promptTokens = this.estimateTokens(request.promptChars);
    const outputTokens = request.maxOutputTokens ?? this.config.usageDefaultMaxOutputTokens;
    const price = this.priceFor(request.provider, request.model);
    const cost = price ? priceCall(price, promptTokens, 0, outputTokens) : undefined;
    const tokens = promptTokens + outputTokens;
    for (const guard of request.budget ? [...this.guards, request.budget] : this.guards) {
      const refusal = guard.check(request, { promptTokens, promptCost: price ? priceCall(price, promptTokens, 0, 0) : undefined });
      if (refusal === null) continue;
      this.write(refusalRecord(request, startedAt, refusal.code));
      throw refusal;
    }
    for (const limit of this.limitSettings.limits) {
      if (!limitCovers(limit, request.provider, request.model, request.purpose)) continue;
      // a money limit counts only calls priced in its currency: others neither count nor are refused by it
      if (limit.unit === 'money' && cost?.currency !== limit.currency) continue;
      const adds = limit.unit === 'tokens' ? tokens : (cost?.amount ?? 0);
      const status = this.limitStatus(limit, startedAt);
      if (status.used + status.reserved + adds > limit.amount) {
        this.recordRefusal(request, startedAt);
        this.logger.warn(
          formatEvent('usage.call.refused', {
            limit: limit.id,
            purpose: request.purpose,
            provider: request.provider,
            model: request.model,
            used: status.used,
            reserved: status.reserved,
            estimate: adds,
            amount: limit.amount,
          }),
        );
        throw new SpendLimitError(status);
      }
    }
    const reservation: UsageReservation = {
      id: this.nextReservation++,
      request,
      startedAt,
      startedMs: performance.now(),
      promptTokens,
      tokens,
      cost,
      settled: false,
    };
    this.reservations.set(reservation.id, reservation);
    return reservation;
  }

  /** Adds a check every call passes before its estimate is reserved (besides the spend limits). */
  addCallGuard(guard: ModelCallGuard): void {
    this.guards.push(guard);
  }

  /** Writes the call's record, releases its reservation and sends any warning it caused. Idempotent; never throws. */
  settle(reservation: UsageReservation, result: ModelCallResult): UsageRecord | null {
    if (reservation.settled) return null;
    reservation.settled = true;
    this.reservations.delete(reservation.id);
    const { request } = reservation;
    const call = settledRecord(reservation, result, this.priceFor(request.provider, request.model), (chars) => this.estimateTokens(chars));
    const record = this.write(call);
    if (record) this.checkWarnings(request, reservation.startedAt);
    return record;
  }

  private recordRefusal(request: ModelCallRequest, at: Date): void {
    this.write(refusalRecord(request, at));
  }

  private write(call: NewUsageRecord): UsageRecord | null {
    let record: UsageRecord;
    try {
      record = this.ledger.insert(call);
    } catch (err) {
      this.logger.error(formatEvent('usage.record.failed', { purpose: call.purpose, error_type: err instanceof Error ? err.name : typeof err }));
      return null;
    }
    this.count(call);
    try {
      this.events.emit(MODEL_CALL_RECORDED_EVENT, record);
    } catch (err) {
      this.logger.error(formatEvent('usage.record.listener_failed', { error_type: err instanceof Error ? err.name : typeof err }));
    }
    return record;
  }

  /** Adds a written call to the cached totals of its day and month (when they are loaded and current). */
  private count(call: NewUsageRecord): void {
    for (const cache of [this.day, this.month]) {
      if (!cache) continue;
      const key = cache === this.day ? call.day : call.day.slice(0, 7);
      if (key !== cache.key) continue;
      const id = groupKey(call.provider, call.model, call.purpose);
      let group = cache.groups.get(id);
      if (!group) {
        group = { provider: call.provider, model: call.model, purpose: call.purpose, tokens: 0, money: new Map() };
        cache.groups.set(id, group);
      }
      group.tokens += call.total_tokens;
      if (call.cost) group.money.set(call.cost.currency, (group.money.get(call.cost.currency) ?? 0) + call.cost.amount);
    }
  }

  private windowGroups(window: 'day' | 'month', now: Date): Iterable<UseGroup> {
    const key = window === 'day' ? localDay(now) : localMonth(now);
    const current = window === 'day' ? this.day : this.month;
    if (current && current.key === key) return current.groups.values();
    const { from, to } = windowDays(window, now);
    const groups = new Map<string, UseGroup>();
    for (const group of this.ledger.windowUse(from, to)) groups.set(groupKey(group.provider, group.model, group.purpose), group);
    const cache: WindowCache = { key, groups };
    if (window === 'day') this.day = cache;
    else this.month = cache;
    return groups.values();
  }

  /** A limit with its use in the window containing `now`. */
  private limitStatus(limit: SpendLimit, now: Date): SpendLimitStatus {
    let used = 0;
    for (const group of this.windowGroups(limit.window, now)) {
      if (!limitCovers(limit, group.provider, group.model, group.purpose)) continue;
      used += limit.unit === 'tokens' ? group.tokens : (group.money.get(limit.currency ?? '') ?? 0);
    }
    let reserved = 0;
    for (const held of this.reservations.values()) {
      if (!limitCovers(limit, held.request.provider, held.request.model, held.request.purpose)) continue;
      if (limit.unit === 'tokens') reserved += held.tokens;
      else if (held.cost && held.cost.currency === limit.currency) reserved += held.cost.amount;
    }
    if (limit.unit === 'money') {
      used = roundMoney(used);
      reserved = roundMoney(reserved);
    }
    const share = limit.amount > 0 ? used / limit.amount : used > 0 ? 1 : 0;
    const state = used >= limit.amount ? 'reached' : share >= this.limitSettings.warn_at ? 'warning' : 'ok';
    return { ...limit, used, reserved, share, state, resets_at: isoWithOffset(windowResetsAt(limit.window, now)) };
  }

  private checkWarnings(request: ModelCallRequest, at: Date): void {
    const now = this.now();
    for (const limit of this.limitSettings.limits) {
      if (!limitCovers(limit, request.provider, request.model, request.purpose)) continue;
      const status = this.limitStatus(limit, now);
      if (status.state === 'ok') continue;
      const key = `${limit.id}\u0000${limit.window === 'day' ? localDay(at) : localMonth(at)}`;
      if (this.warned.has(key)) continue;
      this.warned.add(key);
      this.logger.warn(
        formatEvent('usage.limit.warning', { limit: limit.id, used: status.used, amount: limit.amount, share: Math.round(status.share * 100) / 100 }),
      );
      if (request.chatId !== undefined) this.warnings$.next({ event: 'usage_warning', chat_id: request.chatId, limit: status });
    }
  }

  /** Whether a call of this kind would be refused right now even with an estimate of 0 (a limit is already reached). */
  reachedLimit(provider: LlmProvider, model: string, purpose: ModelCallPurpose): SpendLimitStatus | null {
    const now = this.now();
    const price = this.priceFor(provider, model);
    for (const limit of this.limitSettings.limits) {
      if (!limitCovers(limit, provider, model, purpose)) continue;
      if (limit.unit === 'money' && price?.currency !== limit.currency) continue;
      const status = this.limitStatus(limit, now);
      if (status.used + status.reserved >= limit.amount) return status;
    }
    return null;
  }

  // ---- prices and limits ------------------------------------------------------------------------------------------

  priceFor(provider: LlmProvider, model: string): ModelPrice | undefined {
    return this.priceIndex.get(`${provider}\u0000${model}`);
  }

  prices(): PriceTable {
    return structuredClone(this.priceTable);
  }

  async setPrices(body: unknown): Promise<PriceTable> {
    const parsed = parsePriceTable(body);
    if (!parsed.ok) throw new UsageError('invalid_usage_settings', 'The price table is invalid.', parsed.errors);
    await this.saveSerially(() => this.files.savePrices(parsed.value));
    this.installPrices(parsed.value);
    this.logger.log(formatEvent('usage.prices.saved', { prices: parsed.value.prices.length }));
    return this.prices();
  }

  limits(): SpendLimitSettings {
    return structuredClone(this.limitSettings);
  }

  async setLimits(body: unknown): Promise<SpendLimitSettings> {
    const parsed = parseLimitSettings(body);
    if (!parsed.ok) throw new UsageError('invalid_usage_settings', 'The spend limits are invalid.', parsed.errors);
    await this.saveSerially(() => this.files.saveLimits(parsed.value));
    this.limitSettings = parsed.value;
    this.warned.clear();
    this.logger.log(formatEvent('usage.limits.saved', { limits: parsed.value.limits.length, warn_at: parsed.value.warn_at }));
    return this.limits();
  }

  limitsStatus(): SpendLimitsStatus {
    const now = this.now();
    return {
      time_zone: serverTimeZone(),
      warn_at: this.limitSettings.warn_at,
      limits: this.limitSettings.limits.map((limit) => this.limitStatus(limit, now)),
    };
  }

  private installPrices(table: PriceTable): void {
    this.priceTable = table;
    this.priceIndex = new Map(table.prices.map((price) => [`${price.provider}\u0000${price.model}`, price]));
  }

  private async saveSerially(save: () => Promise<void>): Promise<void> {
    const run = this.savingSettings.then(save, save);
    this.savingSettings = run.catch(() => undefined);
    try {
      await run;
    } catch (err) {
      this.logger.error(formatEvent('usage.settings.save_failed', { error_type: err instanceof Error ? err.name : typeof err }));
      throw new UsageError('settings_save_failed', 'Unable to save the usage settings; nothing changed.');
    }
  }

  // ---- queries ----------------------------------------------------------------------------------------------------

  summary(from: string, to: string): UsageSummary {
    return { from, to, time_zone: serverTimeZone(), ...this.ledger.summary(from, to) };
  }

  records(query: RecordsQuery): UsageRecordsPage {
    return this.ledger.records(query);
  }

  iterateRecords(from: string, to: string): Iterable<UsageRecord> {
    return this.ledger.iterate(from, to);
  }

  chatUsage(chatId: string): ChatUsage {
    return { chat_id: chatId, totals: this.ledger.chatTotals(chatId) };
  }
}
