/**
 * Skill search (openspec skills; skill_search and the REST list's `q`): two BM25 indexes (k1 = 1.2, b = 0.75) over
 * each Skill's name, display name, description, tags and triggers — one of every Skill, one of the enabled ones —
 * updated per document when the catalog changes, so a refresh that changed one package re-indexes one package.
 */
import { Bm25Index, tokenize } from '../common/bm25';
import { byName } from './skill-helpers';
import type { LoadedPackage } from './skill-package-reader';
import type { CatalogEntry } from './skill-record';

export const SEARCH_LIMIT_MAX = 10_000;
const EXACT_NAME_BONUS = 10;

export interface SearchHit {
  entry: CatalogEntry;
  score: number;
}

function searchText(pkg: LoadedPackage): string {
  const m = pkg.manifest;
  return [m.name, m.display_name ?? m.name, m.description, ...m.tags, ...m.triggers].join(' ').toLowerCase();
}

export class SkillSearchIndex {
  private readonly allIndex = new Bm25Index<string>();
  private readonly enabledIndex = new Bm25Index<string>();
  /** name → indexed text + enabled, to update the indexes per document */
  private readonly indexed = new Map<string, { text: string; enabled: boolean }>();

  /** Brings both indexes in line with the effective catalog (only changed documents are re-indexed). */
  sync(effective: ReadonlyMap<string, CatalogEntry>): void {
    for (const name of [...this.indexed.keys()]) {
      if (!effective.has(name)) {
        this.allIndex.remove(name);
        this.enabledIndex.remove(name);
        this.indexed.delete(name);
      }
    }
    for (const [name, entry] of effective) {
      const text = searchText(entry.pkg);
      const enabled = entry.pkg.enabled;
      const previous = this.indexed.get(name);
      if (previous && previous.text === text && previous.enabled === enabled) continue;
      const tokens = tokenize(text);
      if (!previous || previous.text !== text) this.allIndex.addTokens(name, tokens);
      if (enabled) this.enabledIndex.addTokens(name, tokens);
      else this.enabledIndex.remove(name);
      this.indexed.set(name, { text, enabled });
    }
  }

  /**
   * BM25 search: positive scores only, +10 when the trimmed lower-cased query equals a name, sorted by
   * score then name. Disabled Skills only with `includeDisabled`. A query without tokens finds nothing.
   */
  search(
    query: string,
    options: { includeDisabled: boolean; limit: number },
    effective: ReadonlyMap<string, CatalogEntry>,
  ): SearchHit[] {
    const tokens = tokenize(query.toLowerCase());
    if (tokens.length === 0) return [];
    const limit = Math.min(SEARCH_LIMIT_MAX, Math.max(1, Math.floor(options.limit)));
    const index = options.includeDisabled ? this.allIndex : this.enabledIndex;
    const scores = new Map<string, number>();
    for (const hit of index.searchTokens(tokens, index.size)) scores.set(hit.key, hit.score);
    const exact = query.trim().toLowerCase();
    if (index.has(exact)) scores.set(exact, (scores.get(exact) ?? 0) + EXACT_NAME_BONUS);
    const hits: SearchHit[] = [];
    for (const [name, score] of scores) {
      const entry = effective.get(name);
      if (entry && score > 0) hits.push({ entry, score });
    }
    hits.sort((a, b) => (b.score !== a.score ? b.score - a.score : byName(a.entry.record.name, b.entry.record.name)));
    return hits.slice(0, limit);
  }
}
