/**
 * The price table and the spend limits (openspec usage): strict validation of what a client submits, and the two
 * owner-only JSON files next to the other settings, `<configDir>/settings/usage-prices.json` and
 * `<configDir>/settings/usage-limits.json` (directory 0700, files 0600, written atomically).
 *
 * Nothing is shipped: with no file there are no prices (every model shows tokens only, "no price") and no limits.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import {
  isErrorCode,
  isRecord,
  LLM_PROVIDERS,
  type LlmProvider,
  type ModelPrice,
  type PriceTable,
  type SpendLimit,
  type SpendLimitSettings,
} from '@cashcode/contracts';
import { writeFileAtomic } from '../common/atomic-file';
import type { ProblemFieldError } from '../common/problem-details';
import { mkdirPrivate, PRIVATE_DIR_MODE } from '../common/private-fs';

export const DEFAULT_WARN_AT = 0.8;
export const MAX_PRICES = 1000;
export const MAX_LIMITS = 100;
const MODEL_MAX_CHARS = 256;
const CURRENCY_PATTERN = /^[A-Z]{3}$/;
const LIMIT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: ProblemFieldError[] };

function checkKeys(value: Record<string, unknown>, allowed: readonly string[], path: string, errors: ProblemFieldError[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) errors.push({ field: path ? `${path}.${key}` : key, message: 'unknown property' });
  }
}

function amount(value: unknown, field: string, errors: ProblemFieldError[]): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    errors.push({ field, message: 'must be a finite number >= 0' });
    return 0;
  }
  return value;
}

function provider(value: unknown, field: string, errors: ProblemFieldError[]): LlmProvider {
  if (typeof value !== 'string' || !(LLM_PROVIDERS as readonly string[]).includes(value)) {
    errors.push({ field, message: `must be one of ${LLM_PROVIDERS.join(', ')}` });
    return LLM_PROVIDERS[0];
  }
  return value as LlmProvider;
}

function model(value: unknown, field: string, errors: ProblemFieldError[]): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MODEL_MAX_CHARS || value !== value.trim()) {
    errors.push({ field, message: `must be a model id (1 to ${MODEL_MAX_CHARS} characters, no surrounding spaces)` });
    return '';
  }
  return value;
}

function currency(value: unknown, field: string, errors: ProblemFieldError[]): string {
  if (typeof value !== 'string' || !CURRENCY_PATTERN.test(value)) {
    errors.push({ field, message: 'must be an ISO 4217 code of three upper-case letters (e.g. USD)' });
    return '';
  }
  return value;
}

/** Validates a price table (`PUT /api/usage/prices`); one price per provider and model. */
export function parsePriceTable(body: unknown): Parsed<PriceTable> {
  const errors: ProblemFieldError[] = [];
  if (!isRecord(body)) return { ok: false, errors: [{ field: '', message: 'must be an object {"prices": [...]}' }] };
  checkKeys(body, ['prices'], '', errors);
  const raw = body['prices'];
  if (!Array.isArray(raw)) return { ok: false, errors: [...errors, { field: 'prices', message: 'must be an array' }] };
  if (raw.length > MAX_PRICES) errors.push({ field: 'prices', message: `at most ${MAX_PRICES} prices` });
  const prices: ModelPrice[] = [];
  const seen = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const path = `prices[${index}]`;
    if (!isRecord(entry)) {
      errors.push({ field: path, message: 'must be an object' });
      return;
    }
    checkKeys(
      entry,
      ['provider', 'model', 'input_per_million', 'cached_input_per_million', 'cache_write_per_million', 'output_per_million', 'currency'],
      path,
      errors,
    );
    const price: ModelPrice = {
      provider: provider(entry['provider'], `${path}.provider`, errors),
      model: model(entry['model'], `${path}.model`, errors),
      input_per_million: amount(entry['input_per_million'], `${path}.input_per_million`, errors),
      output_per_million: amount(entry['output_per_million'], `${path}.output_per_million`, errors),
      currency: currency(entry['currency'], `${path}.currency`, errors),
    };
    if (entry['cached_input_per_million'] !== undefined && entry['cached_input_per_million'] !== null) {
      price.cached_input_per_million = amount(entry['cached_input_per_million'], `${path}.cached_input_per_million`, errors);
    }
    if (entry['cache_write_per_million'] !== undefined && entry['cache_write_per_million'] !== null) {
      price.cache_write_per_million = amount(entry['cache_write_per_million'], `${path}.cache_write_per_million`, errors);
    }
    const key = `${price.provider}\u0000${price.model}`;
    if (seen.has(key)) errors.push({ field: `${path}.model`, message: 'this provider and model already have a price' });
    seen.add(key);
    prices.push(price);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { prices } };
}

/** Validates the spend limits (`PUT /api/usage/limits`). */
export function parseLimitSettings(body: unknown): Parsed<SpendLimitSettings> {
  const errors: ProblemFieldError[] = [];
  if (!isRecord(body)) return { ok: false, errors: [{ field: '', message: 'must be an object {"limits": [...], "warn_at": 0.8}' }] };
  checkKeys(body, ['limits', 'warn_at'], '', errors);
  let warnAt = DEFAULT_WARN_AT;
  if (body['warn_at'] !== undefined) {
    const value = body['warn_at'];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value >= 1) {
      errors.push({ field: 'warn_at', message: 'must be a number between 0 and 1 (exclusive)' });
    } else warnAt = value;
  }
  const raw = body['limits'];
  if (!Array.isArray(raw)) return { ok: false, errors: [...errors, { field: 'limits', message: 'must be an array' }] };
  if (raw.length > MAX_LIMITS) errors.push({ field: 'limits', message: `at most ${MAX_LIMITS} limits` });
  const limits: SpendLimit[] = [];
  const ids = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const path = `limits[${index}]`;
    if (!isRecord(entry)) {
      errors.push({ field: path, message: 'must be an object' });
      return;
    }
    checkKeys(entry, ['id', 'scope', 'provider', 'model', 'window', 'unit', 'amount', 'currency'], path, errors);
    const id = entry['id'];
    if (typeof id !== 'string' || !LIMIT_ID_PATTERN.test(id)) {
      errors.push({ field: `${path}.id`, message: 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -' });
    } else if (ids.has(id)) {
      errors.push({ field: `${path}.id`, message: 'another limit has this id' });
    } else ids.add(id);
    const scope = entry['scope'];
    if (scope !== 'global' && scope !== 'model' && scope !== 'background') {
      errors.push({ field: `${path}.scope`, message: 'must be one of global, model, background' });
    }
    const window = entry['window'];
    if (window !== 'day' && window !== 'month') errors.push({ field: `${path}.window`, message: 'must be day or month' });
    const unit = entry['unit'];
    if (unit !== 'tokens' && unit !== 'money') errors.push({ field: `${path}.unit`, message: 'must be tokens or money' });
    const limit: SpendLimit = {
      id: typeof id === 'string' ? id : '',
      scope: scope as SpendLimit['scope'],
      window: window as SpendLimit['window'],
      unit: unit as SpendLimit['unit'],
      amount: amount(entry['amount'], `${path}.amount`, errors),
    };
    if (scope === 'model') {
      limit.provider = provider(entry['provider'], `${path}.provider`, errors);
      limit.model = model(entry['model'], `${path}.model`, errors);
    } else {
      if (entry['provider'] !== undefined) errors.push({ field: `${path}.provider`, message: 'only for scope model' });
      if (entry['model'] !== undefined) errors.push({ field: `${path}.model`, message: 'only for scope model' });
    }
    if (unit === 'money') limit.currency = currency(entry['currency'], `${path}.currency`, errors);
    else if (entry['currency'] !== undefined) errors.push({ field: `${path}.currency`, message: 'only for unit money' });
    limits.push(limit);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { limits, warn_at: warnAt } };
}

export const PRICES_FILE = 'usage-prices.json';
export const LIMITS_FILE = 'usage-limits.json';

/** The two settings files; reading a missing file gives the empty default, an invalid one an error the caller logs. */
export class UsageSettingsFiles {
  readonly directory: string;

  constructor(configDir: string) {
    this.directory = join(configDir, 'settings');
  }

  get pricesPath(): string {
    return join(this.directory, PRICES_FILE);
  }

  get limitsPath(): string {
    return join(this.directory, LIMITS_FILE);
  }

  async loadPrices(): Promise<Parsed<PriceTable>> {
    const data = await this.read(this.pricesPath);
    return data === undefined ? { ok: true, value: { prices: [] } } : parsePriceTable(data);
  }

  async loadLimits(): Promise<Parsed<SpendLimitSettings>> {
    const data = await this.read(this.limitsPath);
    return data === undefined ? { ok: true, value: { limits: [], warn_at: DEFAULT_WARN_AT } } : parseLimitSettings(data);
  }

  savePrices(table: PriceTable): Promise<void> {
    return this.write(this.pricesPath, table);
  }

  saveLimits(settings: SpendLimitSettings): Promise<void> {
    return this.write(this.limitsPath, settings);
  }

  /** undefined when the file is missing; a JSON syntax error reads as an invalid (non-object) value */
  private async read(path: string): Promise<unknown> {
    let text: string;
    try {
      text = await fs.readFile(path, 'utf8');
    } catch (error) {
      if (isErrorCode(error, 'ENOENT')) return undefined;
      throw error;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  }

  private async write(path: string, body: unknown): Promise<void> {
    await mkdirPrivate(this.directory);
    await fs.chmod(this.directory, PRIVATE_DIR_MODE).catch(() => undefined);
    await writeFileAtomic(path, `${JSON.stringify(body, null, 2)}\n`);
  }
}
