/**
 * The prices and spend-limits editors of Settings > Prices & limits (openspec console "Requirement: Usage, prices and
 * spend limits"): drafts as typed, client-side checks, the PUT bodies, and the server's field errors mapped back to the
 * rows. Pure functions; the page holds the state.
 */
import type {
  LlmProvider,
  ModelPrice,
  PriceTable,
  SpendLimit,
  SpendLimitScope,
  SpendLimitSettings,
  SpendLimitUnit,
  SpendLimitWindow,
} from '@cashcode/contracts';

import { ApiError, errorMessage } from '../core/api/api-error';
import type { MessageKey } from '../core/i18n/i18n';

export const DEFAULT_WARN_AT = 0.8;

export interface PriceDraft {
  provider: LlmProvider;
  model: string;
  input: string;
  cachedInput: string;
  output: string;
  currency: string;
}

export interface LimitDraft {
  id: string;
  scope: SpendLimitScope;
  provider: LlmProvider;
  model: string;
  window: SpendLimitWindow;
  unit: SpendLimitUnit;
  amount: string;
  currency: string;
}

export interface LimitsDraft {
  limits: LimitDraft[];
  /** the warning share in percent, as typed */
  warnAt: string;
}

/** Field paths as the server names them: `prices.0.model`, `limits.1.amount`, `warn_at`. */
export type FieldErrors = Readonly<Record<string, string>>;
export type ClientErrors = Readonly<Record<string, MessageKey>>;

function numberText(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}

export function priceDrafts(table: PriceTable | null): PriceDraft[] {
  return (table?.prices ?? []).map((price) => ({
    provider: price.provider,
    model: price.model,
    input: numberText(price.input_per_million),
    cachedInput: numberText(price.cached_input_per_million),
    output: numberText(price.output_per_million),
    currency: price.currency,
  }));
}

export function emptyPrice(currency = 'USD'): PriceDraft {
  return { provider: 'openai_compatible', model: '', input: '', cachedInput: '', output: '', currency };
}

export function limitsDraft(settings: SpendLimitSettings | null): LimitsDraft {
  return {
    limits: (settings?.limits ?? []).map((limit) => ({
      id: limit.id,
      scope: limit.scope,
      provider: limit.provider ?? 'openai_compatible',
      model: limit.model ?? '',
      window: limit.window,
      unit: limit.unit,
      amount: numberText(limit.amount),
      currency: limit.currency ?? 'USD',
    })),
    warnAt: String(Math.round((settings?.warn_at ?? DEFAULT_WARN_AT) * 100)),
  };
}

/** A new limit with an id unique among `taken` (`limit-1`, `limit-2`, …). */
export function emptyLimit(taken: readonly LimitDraft[]): LimitDraft {
  const ids = new Set(taken.map((limit) => limit.id));
  let n = 1;
  while (ids.has(`limit-${n}`)) n++;
  return {
    id: `limit-${n}`,
    scope: 'global',
    provider: 'openai_compatible',
    model: '',
    window: 'day',
    unit: 'tokens',
    amount: '',
    currency: 'USD',
  };
}

/** A decimal as typed (`0.15`, `2`), or null: blank, not a number, negative. */
function parseAmount(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '' || !/^\d+(?:\.\d+)?$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

const CURRENCY = /^[A-Z]{3}$/;

export function validatePrices(drafts: readonly PriceDraft[]): ClientErrors {
  const errors: Record<string, MessageKey> = {};
  const seen = new Set<string>();
  drafts.forEach((draft, index) => {
    const at = `prices.${index}.`;
    const model = draft.model.trim();
    if (model === '') errors[`${at}model`] = 'usageSettings.error.required';
    else if (seen.has(`${draft.provider}/${model}`)) errors[`${at}model`] = 'usageSettings.error.duplicate';
    seen.add(`${draft.provider}/${model}`);
    if (parseAmount(draft.input) === null) errors[`${at}input_per_million`] = 'usageSettings.error.number';
    if (draft.cachedInput.trim() !== '' && parseAmount(draft.cachedInput) === null) {
      errors[`${at}cached_input_per_million`] = 'usageSettings.error.number';
    }
    if (parseAmount(draft.output) === null) errors[`${at}output_per_million`] = 'usageSettings.error.number';
    if (!CURRENCY.test(draft.currency.trim().toUpperCase())) errors[`${at}currency`] = 'usageSettings.error.currency';
  });
  return errors;
}

/** The PUT body of valid drafts (validatePrices found nothing). */
export function buildPriceTable(drafts: readonly PriceDraft[]): PriceTable {
  return {
    prices: drafts.map((draft) => {
      const price: ModelPrice = {
        provider: draft.provider,
        model: draft.model.trim(),
        input_per_million: parseAmount(draft.input) ?? 0,
        output_per_million: parseAmount(draft.output) ?? 0,
        currency: draft.currency.trim().toUpperCase(),
      };
      const cached = parseAmount(draft.cachedInput);
      if (cached !== null) price.cached_input_per_million = cached;
      return price;
    }),
  };
}

export function validateLimits(draft: LimitsDraft): ClientErrors {
  const errors: Record<string, MessageKey> = {};
  draft.limits.forEach((limit, index) => {
    const at = `limits.${index}.`;
    if (limit.scope === 'model' && limit.model.trim() === '') errors[`${at}model`] = 'usageSettings.error.required';
    const amount = parseAmount(limit.amount);
    if (amount === null || amount <= 0) errors[`${at}amount`] = 'usageSettings.error.positive';
    if (limit.unit === 'money' && !CURRENCY.test(limit.currency.trim().toUpperCase())) {
      errors[`${at}currency`] = 'usageSettings.error.currency';
    }
  });
  const warnAt = draft.warnAt.trim();
  const share = /^\d{1,2}$/.test(warnAt) ? Number(warnAt) : NaN;
  if (!(share >= 1 && share <= 99)) errors['warn_at'] = 'usageSettings.error.share';
  return errors;
}

/** The PUT body of a valid draft: provider and model only for `model`, currency only for `money`. */
export function buildLimitSettings(draft: LimitsDraft): SpendLimitSettings {
  return {
    limits: draft.limits.map((row) => {
      const limit: SpendLimit = {
        id: row.id,
        scope: row.scope,
        window: row.window,
        unit: row.unit,
        amount: parseAmount(row.amount) ?? 0,
      };
      if (row.scope === 'model') {
        limit.provider = row.provider;
        limit.model = row.model.trim();
      }
      if (row.unit === 'money') limit.currency = row.currency.trim().toUpperCase();
      return limit;
    }),
    warn_at: Number(draft.warnAt.trim()) / 100,
  };
}

/** `prices[0].model` → `prices.0.model` */
export function normalizeFieldPath(field: string): string {
  return field.replace(/\[(\d+)\]/g, '.$1');
}

/**
 * A failed save as field messages (the problem's `errors`, keyed by their paths) and a general message for the rest
 * (the problem's detail when no field took it, or any other failure).
 */
export function mapSaveError(error: unknown, knownField: (path: string) => boolean): { fields: FieldErrors; general: string | null } {
  if (!(error instanceof ApiError)) return { fields: {}, general: errorMessage(error) };
  const fields: Record<string, string> = {};
  const unplaced: string[] = [];
  for (const entry of error.fieldErrors) {
    const path = normalizeFieldPath(entry.field);
    if (knownField(path)) fields[path] = fields[path] ? `${fields[path]}; ${entry.message}` : entry.message;
    else unplaced.push(`${entry.field}: ${entry.message}`);
  }
  if (Object.keys(fields).length === 0) return { fields, general: error.detail };
  return { fields, general: unplaced.length > 0 ? unplaced.join('; ') : null };
}

/** Whether a price field path names a field of the editor (`prices.<i>.<field>` of an existing row). */
export function priceFieldKnown(path: string, rows: number): boolean {
  const match = /^prices\.(\d+)\.(provider|model|input_per_million|cached_input_per_million|output_per_million|currency)$/.exec(path);
  return match !== null && Number(match[1]) < rows;
}

export function limitFieldKnown(path: string, rows: number): boolean {
  if (path === 'warn_at') return true;
  const match = /^limits\.(\d+)\.(id|scope|provider|model|window|unit|amount|currency)$/.exec(path);
  return match !== null && Number(match[1]) < rows;
}

/** Drafts compare by what they would save (blank fields and spacing as typed count as edits). */
export function sameDrafts<T>(a: T, b: T): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
