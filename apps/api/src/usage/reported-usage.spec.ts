import { reportedCachedTokens } from './reported-usage';

describe('reportedCachedTokens', () => {
  it('Scenario: done reports the cached prompt tokens the provider reported, summed over the model calls', () => {
    expect(reportedCachedTokens({ prompt_tokens: 1100, prompt_tokens_details: { cached_tokens: 896 } })).toBe(896);
    expect(reportedCachedTokens({ prompt_tokens: 1100, prompt_tokens_details: { cached_tokens: 0 } })).toBe(0);
    // said nothing: unknown, not zero
    expect(reportedCachedTokens({ prompt_tokens: 1100 })).toBeUndefined();
    expect(reportedCachedTokens({ prompt_tokens: 1100, prompt_tokens_details: null })).toBeUndefined();
    expect(reportedCachedTokens(null)).toBeUndefined();
  });

  it("Scenario: DeepSeek's prompt_cache_hit_tokens count as cached prompt tokens", () => {
    expect(reportedCachedTokens({ prompt_tokens: 1200, prompt_cache_hit_tokens: 1024 })).toBe(1024);
    // the OpenAI field wins when both are there
    expect(reportedCachedTokens({ prompt_tokens_details: { cached_tokens: 5 }, prompt_cache_hit_tokens: 7 })).toBe(5);
  });

  it('a malformed count is unknown', () => {
    expect(reportedCachedTokens({ prompt_tokens_details: { cached_tokens: -1 } })).toBeUndefined();
    expect(reportedCachedTokens({ prompt_tokens_details: { cached_tokens: Number.NaN } })).toBeUndefined();
    expect(reportedCachedTokens({ prompt_cache_hit_tokens: Number.POSITIVE_INFINITY })).toBeUndefined();
  });
});
