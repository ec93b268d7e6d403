import { ApiError } from '../core/api/api-error';
import {
  buildLimitSettings,
  buildPriceTable,
  emptyLimit,
  emptyPrice,
  limitFieldKnown,
  limitsDraft,
  mapSaveError,
  normalizeFieldPath,
  priceDrafts,
  priceFieldKnown,
  validateLimits,
  validatePrices,
} from './usage-settings-form';

describe('usage settings form', () => {
  it('Scenario: prices and limits are checked in the console before they are saved', () => {
    const prices = [
      { ...emptyPrice(), model: 'gpt-a', input: '0.15', output: '0.6', currency: 'usd' },
      { ...emptyPrice(), model: 'gpt-a', input: 'x', cachedInput: '-1', output: '', currency: 'US' },
    ];
    expect(validatePrices(prices)).toEqual({
      'prices.1.model': 'usageSettings.error.duplicate',
      'prices.1.input_per_million': 'usageSettings.error.number',
      'prices.1.cached_input_per_million': 'usageSettings.error.number',
      'prices.1.output_per_million': 'usageSettings.error.number',
      'prices.1.currency': 'usageSettings.error.currency',
    });
    expect(validatePrices([{ ...emptyPrice(), input: '1', output: '1' }])).toEqual({ 'prices.0.model': 'usageSettings.error.required' });
    // a blank cached price is left out (the server uses the input price)
    expect(buildPriceTable(prices.slice(0, 1))).toEqual({
      prices: [{ provider: 'openai_compatible', model: 'gpt-a', input_per_million: 0.15, output_per_million: 0.6, currency: 'USD' }],
    });

    const first = emptyLimit([]);
    const second = emptyLimit([first]);
    expect([first.id, second.id]).toEqual(['limit-1', 'limit-2']);
    const draft = {
      warnAt: '0',
      limits: [
        { ...first, scope: 'model' as const, amount: '0' },
        { ...second, unit: 'money' as const, amount: '5', currency: 'eu' },
      ],
    };
    expect(validateLimits(draft)).toEqual({
      'limits.0.model': 'usageSettings.error.required',
      'limits.0.amount': 'usageSettings.error.positive',
      'limits.1.currency': 'usageSettings.error.currency',
      warn_at: 'usageSettings.error.share',
    });
    const valid = {
      warnAt: '75',
      limits: [
        { ...first, scope: 'model' as const, model: ' gpt-a ', amount: '100000' },
        { ...second, window: 'month' as const, unit: 'money' as const, amount: '5', currency: 'eur' },
      ],
    };
    expect(validateLimits(valid)).toEqual({});
    // provider and model only for a model limit, the currency only for money
    expect(buildLimitSettings(valid)).toEqual({
      warn_at: 0.75,
      limits: [
        { id: 'limit-1', scope: 'model', provider: 'openai_compatible', model: 'gpt-a', window: 'day', unit: 'tokens', amount: 100000 },
        { id: 'limit-2', scope: 'global', window: 'month', unit: 'money', amount: 5, currency: 'EUR' },
      ],
    });
  });

  it('drafts round-trip what the server holds; warn_at defaults to 80 %', () => {
    const table = { prices: [{ provider: 'ollama' as const, model: 'llama', input_per_million: 0, cached_input_per_million: 0, output_per_million: 0.1, currency: 'USD' }] };
    expect(buildPriceTable(priceDrafts(table))).toEqual(table);
    expect(limitsDraft(null)).toEqual({ limits: [], warnAt: '80' });
    const settings = { warn_at: 0.9, limits: [{ id: 'bg', scope: 'background' as const, window: 'day' as const, unit: 'tokens' as const, amount: 5000 }] };
    expect(buildLimitSettings(limitsDraft(settings))).toEqual(settings);
  });

  it("Scenario: the server's field errors show next to their fields", () => {
    expect(normalizeFieldPath('prices[1].currency')).toBe('prices.1.currency');
    expect(priceFieldKnown('prices.1.currency', 2)).toBe(true);
    expect(priceFieldKnown('prices.2.currency', 2)).toBe(false);
    expect(limitFieldKnown('warn_at', 0)).toBe(true);
    expect(limitFieldKnown('limits.0.amount', 1)).toBe(true);
    const problem = new ApiError(422, 'Validation failed', [
      { field: 'prices[0].currency', message: 'currency must be an ISO 4217 code' },
      { field: 'prices.0.currency', message: 'unknown currency' },
      { field: 'prices.5.model', message: 'stale row' },
    ]);
    expect(mapSaveError(problem, (path) => priceFieldKnown(path, 1))).toEqual({
      fields: { 'prices.0.currency': 'currency must be an ISO 4217 code; unknown currency' },
      general: 'prices.5.model: stale row',
    });
    // no field placed: the problem's detail; not an ApiError: its message
    expect(mapSaveError(new ApiError(409, 'Conflict'), () => false)).toEqual({ fields: {}, general: 'Conflict' });
    expect(mapSaveError(new Error('offline'), () => true)).toEqual({ fields: {}, general: 'offline' });
  });
});
