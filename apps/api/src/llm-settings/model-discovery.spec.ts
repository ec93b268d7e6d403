import { entryAcceptsImages, modelCatalog, normaliseModelIds } from './model-discovery';

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

describe('entryAcceptsImages / modelCatalog', () => {
  it('reads the ways providers mark image input', () => {
    expect(entryAcceptsImages({ id: 'a', capabilities: ['completion', 'vision'] })).toBe(true);
    expect(entryAcceptsImages({ id: 'b', architecture: { input_modalities: ['text', 'image'] } })).toBe(true);
    expect(entryAcceptsImages({ id: 'c', input_modalities: ['image'] })).toBe(true);
    expect(entryAcceptsImages({ id: 'd', type: 'vlm' })).toBe(true);
    expect(entryAcceptsImages({ id: 'e', capabilities: ['completion'], type: 'llm' })).toBe(false);
    expect(entryAcceptsImages({ id: 'f', capabilities: 'vision' })).toBe(false);
    expect(entryAcceptsImages(null)).toBe(false);
  });

  it('lists the ids as before and the image models by trimmed id', () => {
    const catalog = modelCatalog([{ id: ' v ', capabilities: ['vision'] }, { id: 'a' }, { id: 'v' }]);
    expect(catalog.ids).toEqual(['a', 'v']);
    expect([...catalog.imageModels]).toEqual(['v']);
  });
});
