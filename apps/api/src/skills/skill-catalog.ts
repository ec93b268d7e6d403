/**
 * The Skill catalog: scans the three roots, keeps the valid packages, picks per name the highest
 * precedence (builtin < user < agent, the winner lists the lower sources in `shadowed_sources`), computes availability
 * (`bin:`, `env:`, `tool:`, `mcp:`; meta tools such as `tool_search` count as present) and reports
 * invalid packages as redacted, length-limited diagnostics that are never offered to the model.
 *
 * Refresh is incremental: a package is re-read only when its fingerprint (directory, SKILL.md, _meta.json stats)
 * changed or a mutation forced it; the two BM25 indexes (all Skills / enabled Skills) are updated per document.
 * Concurrent refreshes are coalesced.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { SkillAvailability, SkillRecord, SkillRequirementsRecord, SkillSource } from '@cashcode/contracts';
import { Bm25Index, tokenize } from '../common/bm25';
import { formatEvent } from '../common/log-format';
import { MCP_TOOL_PREFIX } from '../agent/tool-registry';
import type { LoadedPackage, PackageReadResult } from './skill-package-reader';
import type { SkillStore } from './skill-store';

/** Injection token of the SkillCatalog (built by the skills module with its availability probe). */
export const SKILL_CATALOG = Symbol('SKILL_CATALOG');

/** precedence order, lowest first */
export const SKILL_SOURCE_ORDER: readonly SkillSource[] = ['builtin', 'user', 'agent'];
export const MAX_INVALID_REPORTED = 100;
export const DIAGNOSTIC_KEY_MAX_CHARS = 80;
export const DIAGNOSTIC_MESSAGE_MAX_CHARS = 240;
export const SEARCH_LIMIT_MAX = 10_000;
/** Longest stretch of synchronous package reads before the refresh yields to the event loop. */
const READ_SLICE_MS = 8;
/** BM25 parameters: k1 = 1.2, b = 0.75 (2.2 = k1 + 1) */
const SKILL_BM25 = { k1: 1.2, b: 0.75 };
const EXACT_NAME_BONUS = 10;
/** a quick refresh re-checks package fingerprints when the last deep pass is older than this */
export const QUICK_REFRESH_MAX_AGE_MS = 1000;

/** What availability needs from the rest of the server. */
export interface AvailabilityProbe {
  /** the tool is registered (main registry or meta tools) */
  hasTool(name: string): boolean;
  /** the MCP server is in the catalog */
  mcpServerConfigured(name: string): boolean;
}

export interface CatalogEntry {
  pkg: LoadedPackage;
  record: SkillRecord;
}

export interface InvalidPackage {
  key: string;
  source: SkillSource;
  directory: string;
  error: string;
}

export interface SearchHit {
  entry: CatalogEntry;
  score: number;
}

interface CachedRead {
  signature: string;
  result: PackageReadResult;
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** At most `max` code points; a cut text ends with `...` (included in the limit). */
export function boundText(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return chars.slice(0, Math.max(0, max - 3)).join('') + '...';
}

function replaceControl(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ');
}

const WINDOWS_PATH = /\b[A-Za-z]:[\\/][^\s'"<>|]*/g;
const POSIX_PATH = /(^|[\s'"(=:])\/[^\s'"<>()]+/g;

/**
 * A diagnostic message safe to show: known root/package paths and any absolute path replaced by `<path>`, control
 * characters as spaces, trimmed, at most 240 chars; fallback `invalid Skill package`.
 */
export function sanitizeDiagnostic(message: string, knownPaths: readonly string[]): string {
  let text = message;
  for (const known of [...knownPaths].sort((a, b) => b.length - a.length)) {
    if (known) text = text.split(known).join('<path>');
  }
  text = text.replace(WINDOWS_PATH, '<path>').replace(POSIX_PATH, (_match, lead: string) => `${lead}<path>`);
  text = replaceControl(text).trim();
  if (text === '') return 'invalid Skill package';
  return boundText(text, DIAGNOSTIC_MESSAGE_MAX_CHARS);
}

/** The diagnostics key prefix `<source>:<dir>` (dir: control chars → space, trimmed, ≤ 80 chars). */
export function diagnosticKey(source: SkillSource, directory: string): string {
  const dir = boundText(replaceControl(directory).trim(), DIAGNOSTIC_KEY_MAX_CHARS);
  return `${source}:${dir}`;
}

/** A record's own copy of a manifest's requirement lists (string arrays only: a plain copy, not structuredClone). */
function copyRequirements(r: SkillRequirementsRecord): SkillRequirementsRecord {
  return { tools: [...r.tools], mcp_servers: [...r.mcp_servers], bins: [...r.bins], env: [...r.env] };
}

function searchText(pkg: LoadedPackage): string {
  const m = pkg.manifest;
  return [m.name, m.display_name ?? m.name, m.description, ...m.tags, ...m.triggers].join(' ').toLowerCase();
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
  private readonly allIndex = new Bm25Index<string>(SKILL_BM25);
  private readonly enabledIndex = new Bm25Index<string>(SKILL_BM25);
  /** name → indexed text + enabled, to update the indexes per document */
  private readonly indexed = new Map<string, { text: string; enabled: boolean }>();
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
    private readonly probe: AvailabilityProbe,
    private readonly env: { binPath: string; envNames: ReadonlySet<string> },
  ) {}

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
    const bins = new Map<string, Promise<boolean>>();
    const next = new Map<string, CatalogEntry>();
    for (const [name, sources] of bySource) {
      const order = SKILL_SOURCE_ORDER.filter((source) => sources.has(source));
      const winner = order[order.length - 1] as SkillSource;
      const pkg = sources.get(winner) as LoadedPackage;
      next.set(name, { pkg, record: await this.buildRecord(pkg, order.slice(0, -1), bins) });
    }
    this.effective = new Map([...next.entries()].sort(([a], [b]) => byName(a, b)));
    this.setInvalid(invalid);
    this.syncIndexes();
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
    const bins = new Map<string, Promise<boolean>>();
    for (const entry of this.effective.values()) {
      const { availability, missing } = await this.availabilityOf(entry.pkg, bins);
      entry.record.availability = availability;
      entry.record.missing = missing;
    }
    this.revision++;
  }

  /** Fresh availability of one package (skill_load checks it at load time). */
  async availabilityOf(
    pkg: LoadedPackage,
    bins: Map<string, Promise<boolean>> = new Map(),
  ): Promise<{ availability: SkillAvailability; missing: string[] }> {
    if (!pkg.enabled) return { availability: 'disabled', missing: [] };
    const missing: string[] = [];
    const requires = pkg.manifest.requires;
    for (const bin of requires.bins) {
      let found = bins.get(bin);
      if (!found) {
        found = this.binOnPath(bin);
        bins.set(bin, found);
      }
      if (!(await found)) missing.push(`bin:${bin}`);
    }
    for (const variable of requires.env) if (!this.env.envNames.has(variable)) missing.push(`env:${variable}`);
    for (const tool of requires.tools) {
      if (!tool.startsWith(MCP_TOOL_PREFIX) && !this.probe.hasTool(tool)) missing.push(`tool:${tool}`);
    }
    for (const server of requires.mcp_servers) if (!this.probe.mcpServerConfigured(server)) missing.push(`mcp:${server}`);
    return { availability: missing.length > 0 ? 'missing_dependency' : 'available', missing };
  }

  private async binOnPath(bin: string): Promise<boolean> {
    if (bin.includes('/') || bin.includes('\\') || bin.includes('\0')) return false;
    const dirs = this.env.binPath.split(path.delimiter).filter((dir) => dir !== '' && path.isAbsolute(dir));
    for (const dir of dirs) {
      const candidate = path.join(dir, bin);
      try {
        const stat = await fs.stat(candidate);
        if (!stat.isFile()) continue;
        await fs.access(candidate, fsConstants.X_OK);
        return true;
      } catch {
        // next directory
      }
    }
    return false;
  }

  private async buildRecord(
    pkg: LoadedPackage,
    shadowed: SkillSource[],
    bins: Map<string, Promise<boolean>>,
  ): Promise<SkillRecord> {
    const m = pkg.manifest;
    const { availability, missing } = await this.availabilityOf(pkg, bins);
    return {
      name: m.name,
      display_name: m.display_name ?? m.name,
      description: m.description,
      version: m.version,
      version_label: m.version_label,
      tags: [...m.tags],
      triggers: [...m.triggers],
      always: m.always,
      source: pkg.source,
      enabled: pkg.enabled,
      availability,
      missing,
      hash: pkg.hash,
      shadowed_sources: shadowed,
      shadows_builtin: pkg.source !== 'builtin' && shadowed.includes('builtin'),
      validation_errors: [],
      requires: copyRequirements(m.requires),
      optional: copyRequirements(m.optional),
      mutable: pkg.source !== 'builtin',
      license: m.license,
      compatibility: m.compatibility,
      metadata: { ...m.metadata },
      allowed_tools: m.allowed_tools ? [...m.allowed_tools] : null,
    };
  }

  private setInvalid(invalid: InvalidPackage[]): void {
    const known = [this.store.roots.builtin, this.store.roots.user, this.store.roots.agent, this.store.roots.snapshots];
    const map: Record<string, string[]> = {};
    const list: InvalidPackage[] = [];
    for (const item of invalid) {
      if (list.length >= MAX_INVALID_REPORTED) break;
      const packagePath = path.join(this.store.rootOf(item.source), item.directory);
      let key = diagnosticKey(item.source, item.directory);
      if (key in map) key = `${key}~${createHash('sha256').update(item.directory).digest('hex').slice(0, 8)}`;
      const message = sanitizeDiagnostic(item.error, [packagePath, ...known]);
      map[key] = [message];
      list.push({ ...item, key, error: message });
    }
    this.invalidMap = map;
    this.invalidList = list;
  }

  private syncIndexes(): void {
    for (const name of [...this.indexed.keys()]) {
      if (!this.effective.has(name)) {
        this.allIndex.remove(name);
        this.enabledIndex.remove(name);
        this.indexed.delete(name);
      }
    }
    for (const [name, entry] of this.effective) {
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
      const entry = this.effective.get(name);
      if (entry && score > 0) hits.push({ entry, score });
    }
    hits.sort((a, b) => (b.score !== a.score ? b.score - a.score : byName(a.entry.record.name, b.entry.record.name)));
    return hits.slice(0, limit);
  }
}
