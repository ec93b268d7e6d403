import type { CatalogEntry } from './skill-record';
import { SKILL_INDEX_HEADER, SKILL_INDEX_MAX_CHARS, renderSkillIndex } from './skill-index';

function entry(name: string, description: string, enabled = true, availability = 'available'): CatalogEntry {
  return { pkg: { enabled, manifest: { name, description } }, record: { name, availability } } as unknown as CatalogEntry;
}

describe('installed Skills index', () => {
  it('Scenario: the index lists enabled, available Skills by name with one-line descriptions', () => {
    const index = renderSkillIndex([
      entry('weather', 'Forecasts\n  and   alerts'),
      entry('github', 'Work with GitHub'),
      entry('off', 'Disabled one', false, 'disabled'),
      entry('gh-cli', 'Needs gh', true, 'missing_dependency'),
      entry('Zeta', 'Upper case sorts first'),
    ]);
    expect(index).toBe(`${SKILL_INDEX_HEADER}\n- Zeta: Upper case sorts first\n- github: Work with GitHub\n- weather: Forecasts and alerts`);
    expect(renderSkillIndex([entry('b', 'B'), entry('a', 'A')])).toBe(renderSkillIndex([entry('a', 'A'), entry('b', 'B')]));
    expect(renderSkillIndex([entry('off', 'x', false, 'disabled')])).toBeNull();
  });

  it('Scenario: the index is capped; long descriptions are cut and the rest is left to skill_search', () => {
    const long = renderSkillIndex([entry('a', 'x'.repeat(500))]) ?? '';
    expect(long).toBe(`${SKILL_INDEX_HEADER}\n- a: ${'x'.repeat(197)}...`);
    const many = Array.from({ length: 100 }, (_, i) => entry(`skill-${String(i).padStart(3, '0')}`, 'd'.repeat(180)));
    const index = renderSkillIndex(many) ?? '';
    expect(index.length).toBeLessThanOrEqual(SKILL_INDEX_MAX_CHARS);
    const listed = index.split('\n').filter((line) => line.startsWith('- ')).length;
    expect(listed).toBeGreaterThan(10);
    expect(listed).toBeLessThan(100);
    expect(index).toContain('- skill-000: ');
    expect(index.endsWith(`\n(${100 - listed} more Skills not listed; find them with skill_search.)`)).toBe(true);
  });
});
