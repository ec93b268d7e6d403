import { sessionSearchQuery } from './session-search';

describe('session search query', () => {
  it('Scenario: the search box sends the trimmed text and nothing when blank', () => {
    expect(sessionSearchQuery('  capital ')).toBe('capital');
    expect(sessionSearchQuery('   ')).toBeNull();
    expect(sessionSearchQuery('')).toBeNull();
    const long = '字'.repeat(250);
    expect(Array.from(sessionSearchQuery(long) ?? '')).toHaveLength(200);
  });
});
