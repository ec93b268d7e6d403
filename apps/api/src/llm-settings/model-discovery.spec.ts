import { normaliseModelIds } from './model-discovery';

describe('normaliseModelIds', () => {
  it('Scenario: ids are de-duplicated and sorted case-insensitively', () => {
    expect(normaliseModelIds([{ id: 'fake-b' }, { id: 'Fake-A' }, { id: 'fake-b' }])).toEqual(['Fake-A', 'fake-b']);
  });

  it('Scenario: non-string, blank and too long ids are dropped; ids are trimmed', () => {
    expect(
      normaliseModelIds([
        { id: '  spaced  ' },
        { id: 42 },
        { id: '   ' },
        { id: 'x'.repeat(257) },
        { id: 'y'.repeat(256) },
        null,
        'bare-string',
        {},
      ]),
    ).toEqual(['spaced', 'y'.repeat(256)]);
  });

  it('Scenario: only the first 500 entries are considered', () => {
    const entries = Array.from({ length: 600 }, (_, index) => ({ id: `m${String(index).padStart(3, '0')}` }));
    const ids = normaliseModelIds(entries);
    expect(ids).toHaveLength(500);
    expect(ids[499]).toBe('m499');
  });

  it('Scenario: ids equal ignoring case keep the provider order', () => {
    expect(normaliseModelIds([{ id: 'b' }, { id: 'A' }, { id: 'a' }])).toEqual(['A', 'a', 'b']);
  });
});
