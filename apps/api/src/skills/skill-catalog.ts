/**
 * The Skill catalog: scans the three roots, keeps the valid packages and picks per name the highest precedence
 * (builtin < user < agent, the winner lists the lower sources in `shadowed_sources`). It keeps the effective entries
 * (`skill-record.ts`) with their availability (`skill-availability.ts`), the search indexes (`skill-search-index.ts`)
 * and the report of invalid packages (`skill-diagnostics.ts`) in step with the disk.
 *
 * Refresh is incremental: the package reads are cached with their fingerprint (directory and SKILL.md stats; `_meta.json`
 * is replaced by rename, which changes the directory) and a package is re-read only when it changed or a mutation
 * forced it. Concurrent refreshes are coalesced.
 */
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { SkillAvailability, SkillSource } from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { AvailabilityCheck, type AvailabilityEnv, type AvailabilityProbe, type BinLookups } from './skill-availability';
import { reportInvalid, type InvalidPackage } from './skill-diagnostics';
import { byName } from './skill-helpers';
import type { LoadedPackage, PackageReadResult } from './skill-package-reader';
import { skillRecord, type CatalogEntry } from './skill-record';
import { SkillSearchIndex, type SearchHit } from './skill-search-index';
import type { SkillStore } from './skill-store';

/** Injection token of the SkillCatalog (built by the skills module with its availability probe). */
export const SKILL_CATALOG = Symbol('SKILL_CATALOG');

/** precedence order, lowest first */
export const SKILL_SOURCE_ORDER: readonly SkillSource[] = ['builtin', 'user', 'agent'];
/** Longest stretch of synchronous package reads before the refresh yields to the event loop. */
const READ_SLICE_MS = 8;
/** a quick refresh re-checks package fingerprints when the last deep pass is older than this */
export const QUICK_REFRESH_MAX_AGE_MS = 1000;

interface CachedRead {
  signature: string;
  result: PackageReadResult;
}

/**
 * Maps items with a synchronous function in slices of at most `sliceMs`, yielding to the event loop between slices,
 * so that a long synchronous scan (2,000 package reads) never holds the loop for more than a slice.
 */
async function mapInSlices<T, R>(items: readonly T[], sliceMs: number, fn: (item: T) => R): Promise<R[]> {
  const out = new Array<R>(items.length);
  let sliceStart = performance.now();
  for (let index = 0; index < items.length; index++) {
    if (performance.now() - sliceStart >= sliceMs) {
      await setImmediatePromise();
      sliceStart = performance.now();
    }
    out[index] = fn(items[index] as T);
  }
  return out;
}

export class SkillCatalog {
  private readonly logger = new Logger(SkillCatalog.name);
  private readonly reads = new Map<string, CachedRead>();
  private effective = new Map<string, CatalogEntry>();
  private invalidList: InvalidPackage[] = [];
  private invalidMap: Record<string, string[]> = {};
  private readonly searchIndex = new SkillSearchIndex();
  private readonly availability: AvailabilityCheck;
  private inFlight: Promise<void> | null = null;
  private rerun = false;
  private rerunDeep = false;
  private lastDeep = -Infinity;
  private lastInvalidCount = -1;
  private readonly forced = new Set<string>();
  private refreshed = false;
  /** bumped whenever the effective catalog changes */
  revision = 0;

  constructor(
    private readonly store: SkillStore,
    probe: AvailabilityProbe,
    env: AvailabilityEnv,
  ) {
    this.availability = new AvailabilityCheck(probe, env);
  }

  get ready(): boolean {
    return this.refreshed;
  }

  /** Forces a re-read of one package at the next refresh (after a mutation). */
  invalidate(source: SkillSource, directory: string): void {
    this.forced.add(`${source}/${directory}`);
  }

  /**
   * Refreshes the catalog; concurrent calls share one pass (a call during a pass schedules one more).
   * `deep` (default) re-checks every package fingerprint; `quick` re-lists the roots (new and removed packages are
   * seen at once) and re-checks fingerprints only when the last deep pass is older than QUICK_REFRESH_MAX_AGE_MS.
   */
  refresh(mode: 'deep' | 'quick' = 'deep'): Promise<void> {
    const deep = mode === 'deep' || performance.now() - this.lastDeep > QUICK_REFRESH_MAX_AGE_MS;
    if (this.inFlight) {
      this.rerun = true;
      this.rerunDeep ||= deep;
      return this.inFlight;
    }
    const run = (async () => {
      let passDeep = deep;
      for (;;) {
        this.rerun = false;
        this.rerunDeep = false;
        await this.refreshOnce(passDeep);
        if (!this.rerun) break;
        passDeep = this.rerunDeep;
      }
    })().finally(() => {
      this.inFlight = null;
    });
    this.inFlight = run;
    return run;
  }

  /** Whether a package changed on disk since it was read (its fingerprint differs). */
  async changedOnDisk(source: SkillSource, directory: string): Promise<boolean> {
    const cached = this.reads.get(`${source}/${directory}`);
    return !cached || cached.signature !== (await this.store.signature(source, directory));
  }

  private async refreshOnce(deep: boolean): Promise<void> {
    const started = performance.now();
    if (deep) this.lastDeep = started;
    const listed = await Promise.all(
      SKILL_SOURCE_ORDER.map(async (source) => ({ source, dirs: await this.store.listDirectories(source) })),
    );
    const work: { source: SkillSource; directory: string; key: string }[] = [];
    for (const { source, dirs } of listed) {
      for (const directory of dirs) work.push({ source, directory, key: `${source}/${directory}` });
    }
    const forced = new Set(this.forced);
    this.forced.clear();
    let reread = 0;
    // synchronous reads in slices: see SkillStore.readPackageSync for what this saves
    const results = await mapInSlices(work, READ_SLICE_MS, (item) => {
      const cached = this.reads.get(item.key);
      if (cached && !deep && !forced.has(item.key)) return { ...item, result: cached.result };
      const signature = this.store.signatureSync(item.source, item.directory);
      if (cached && cached.signature === signature && !forced.has(item.key)) return { ...item, result: cached.result };
      reread++;
      const result = this.store.readPackageSync(item.source, item.directory);
      this.reads.set(item.key, { signature, result });
      return { ...item, result };
    });
    const present = new Set(work.map((item) => item.key));
    for (const key of [...this.reads.keys()]) if (!present.has(key)) this.reads.delete(key);

    // precedence: builtin < user < agent (work is in that order)
    const bySource = new Map<string, Map<SkillSource, LoadedPackage>>();
    const invalid: InvalidPackage[] = [];
    for (const item of results) {
      if (item.result.ok) {
        const pkg = item.result.pkg;
        let sources = bySource.get(pkg.manifest.name);
        if (!sources) {
          sources = new Map();
          bySource.set(pkg.manifest.name, sources);
        }
        sources.set(item.source, pkg);
      } else {
        invalid.push({ key: '', source: item.source, directory: item.directory, error: item.result.error });
      }
    }
    const bins: BinLookups = new Map();
    const next = new Map<string, CatalogEntry>();
    for (const [name, sources] of bySource) {
      const order = SKILL_SOURCE_ORDER.filter((source) => sources.has(source));
      const winner = order[order.length - 1] as SkillSource;
      const pkg = sources.get(winner) as LoadedPackage;
      next.set(name, { pkg, record: skillRecord(pkg, order.slice(0, -1), await this.availabilityOf(pkg, bins)) });
    }
    this.effective = new Map([...next.entries()].sort(([a], [b]) => byName(a, b)));
    const report = reportInvalid(invalid, this.store.roots);
    this.invalidList = report.list;
    this.invalidMap = report.map;
    this.searchIndex.sync(this.effective);
    this.revision++;
    const firstRefresh = !this.refreshed;
    this.refreshed = true;
    // the first refresh (at start) is bookkeeping; later ones are logged when they changed something
    const log = !firstRefresh && (reread > 0 || invalid.length !== this.lastInvalidCount) ? 'log' : 'debug';
    this.lastInvalidCount = invalid.length;
    this.logger[log](
      formatEvent('skill.catalog.refreshed', {
        skills: this.effective.size,
        invalid: invalid.length,
        reread,
        duration_ms: Math.round(performance.now() - started),
      }),
    );
  }

  /** Recomputes availability of every record without touching the disk for packages (tools / MCP catalog changed). */
  async recomputeAvailability(): Promise<void> {
    const bins: BinLookups = new Map();
    for (const entry of this.effective.values()) {
      const { availability, missing } = await this.availabilityOf(entry.pkg, bins);
      entry.record.availability = availability;
      entry.record.missing = missing;
    }
    this.revision++;
  }

  /** Fresh availability of one package (skill_load checks it at load time). */
  availabilityOf(pkg: LoadedPackage, bins: BinLookups = new Map()): Promise<{ availability: SkillAvailability; missing: string[] }> {
    return this.availability.of(pkg, bins);
  }

  // ------------------------------------------------------------------------------------------ reads

  get(name: string): CatalogEntry | undefined {
    return this.effective.get(name);
  }

  /** The effective catalog sorted by name. */
  list(): CatalogEntry[] {
    return [...this.effective.values()];
  }

  get size(): number {
    return this.effective.size;
  }

  /** The diagnostics map (`<source>:<dir>` → [message]). */
  invalid(): Record<string, string[]> {
    return { ...this.invalidMap };
  }

  invalidPackages(): readonly InvalidPackage[] {
    return this.invalidList;
  }

  /**
   * BM25 search: positive scores only, +10 when the trimmed lower-cased query equals a name, sorted by
   * score then name. Disabled Skills only with `includeDisabled`. A query without tokens finds nothing.
   */
  search(query: string, options: { includeDisabled: boolean; limit: number }): SearchHit[] {
    return this.searchIndex.search(query, options, this.effective);
  }
}
