/**
 * The `## Installed Skills` system prompt section (openspec skills "Requirement: Installed Skills index"): every
 * enabled, available Skill as `- <name>: <description>`, sorted by name, descriptions collapsed to one line and cut at
 * SKILL_INDEX_DESCRIPTION_CHARS, the whole section at most SKILL_INDEX_MAX_CHARS; when Skills are left out a last line
 * says how many and that skill_search finds them. SkillTurnService snapshots it per chat at the chat's first turn.
 */
import { boundText, byName } from './skill-helpers';
import type { CatalogEntry } from './skill-record';

export const SKILL_INDEX_MAX_CHARS = 8000;
export const SKILL_INDEX_DESCRIPTION_CHARS = 200;
export const SKILL_INDEX_HEADER =
  '## Installed Skills\nThe enabled Skills of this installation. When one applies to the task, call skill_load with ' +
  'its exact name before following it.';

/** The index section for these catalog entries, or null when no enabled Skill is available. */
export function renderSkillIndex(entries: readonly CatalogEntry[], maxChars = SKILL_INDEX_MAX_CHARS): string | null {
  const usable = entries
    .filter((e) => e.pkg.enabled && e.record.availability === 'available')
    .map((e) => ({ name: e.record.name, description: e.pkg.manifest.description }))
    .sort((a, b) => byName(a.name, b.name));
  if (usable.length === 0) return null;
  const more = (n: number) => `\n(${n} more Skill${n === 1 ? '' : 's'} not listed; find them with skill_search.)`;
  let block = SKILL_INDEX_HEADER;
  let listed = 0;
  for (const skill of usable) {
    const description = boundText(skill.description.replace(/\s+/g, ' ').trim(), SKILL_INDEX_DESCRIPTION_CHARS);
    const line = `\n- ${skill.name}: ${description}`;
    const left = usable.length - listed - 1;
    const reserve = left > 0 ? more(left).length : 0;
    if (block.length + line.length + reserve > maxChars) break;
    block += line;
    listed++;
  }
  if (listed < usable.length) block += more(usable.length - listed);
  return block;
}
