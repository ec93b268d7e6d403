import { parseLimitSettings, parsePriceTable } from './usage-settings';
import { csvCell } from './usage-query';

const fields = (result: { ok: boolean; errors?: Array<{ field: string }> }): string[] =>
  result.ok ? [] : (result.errors ?? []).map((error) => error.field);

describe('usage settings validation', () => {
  it('Scenario: invalid prices and limits are refused with field details', () => {
    const price = { provider: 'openai_compatible', model: 'm', input_per_million: 1, output_per_million: 2, currency: 'USD' };
    expect(parsePriceTable({ prices: [price] })).toEqual({ ok: true, value: { prices: [price] } });
    expect(fields(parsePriceTable({ prices: [{ ...price, currency: 'usd' }] }))).toEqual(['prices[0].currency']);
    expect(fields(parsePriceTable({ prices: [{ ...price, input_per_million: -1 }] }))).toEqual(['prices[0].input_per_million']);
    expect(fields(parsePriceTable({ prices: [{ ...price, output_per_million: Number.POSITIVE_INFINITY }] }))).toEqual([
      'prices[0].output_per_million',
    ]);
    expect(fields(parsePriceTable({ prices: [price, price] }))).toEqual(['prices[1].model']);
    expect(fields(parsePriceTable({ prices: [{ ...price, extra: 1 }] }))).toEqual(['prices[0].extra']);
    expect(fields(parsePriceTable({ prices: [{ ...price, provider: 'acme' }] }))).toEqual(['prices[0].provider']);
    expect(fields(parsePriceTable({}))).toEqual(['prices']);

    const limit = { id: 'day-tokens', scope: 'global', window: 'day', unit: 'tokens', amount: 1000 };
    expect(parseLimitSettings({ limits: [limit] })).toEqual({ ok: true, value: { limits: [limit], warn_at: 0.8 } });
    expect(fields(parseLimitSettings({ limits: [limit, limit] }))).toEqual(['limits[1].id']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, id: 'bad id' }] }))).toEqual(['limits[0].id']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, scope: 'model' }] }))).toEqual(['limits[0].provider', 'limits[0].model']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, unit: 'money' }] }))).toEqual(['limits[0].currency']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, currency: 'USD' }] }))).toEqual(['limits[0].currency']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, amount: Number.NaN }] }))).toEqual(['limits[0].amount']);
    expect(fields(parseLimitSettings({ limits: [{ ...limit, window: 'week' }] }))).toEqual(['limits[0].window']);
    expect(fields(parseLimitSettings({ limits: [], warn_at: 1 }))).toEqual(['warn_at']);
    expect(fields(parseLimitSettings({ limits: [], warn_at: 0 }))).toEqual(['warn_at']);
    const model = { ...limit, scope: 'model', provider: 'ollama', model: 'llama3' };
    expect(parseLimitSettings({ limits: [model], warn_at: 0.5 })).toEqual({ ok: true, value: { limits: [model], warn_at: 0.5 } });
  });

  it('CSV cells are quoted (RFC 4180) and formula starts neutralised', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('=cmd|"x",1')).toBe(`"'=cmd|""x"",1"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell(-1)).toBe('-1');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('a\nb')).toBe('"a\nb"');
  });
});
