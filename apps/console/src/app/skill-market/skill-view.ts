import { isRecord, type SkillArchiveCandidate, type SkillRecord, type SkillSource } from '@cashcode/contracts';
import { parseSkillMarkdown } from '@cashcode/skill-format';

/** One invalid package of the diagnostics map (`<source>:<dir>` → [message]). */
export interface InvalidPackageRow {
  key: string;
  source: SkillSource;
  directory: string;
  /** at most 3 messages, each at most 240 chars with control characters as spaces */
  errors: string[];
  /** built-in diagnostics cannot be removed */
  removable: boolean;
}

const SOURCES: readonly SkillSource[] = ['builtin', 'user', 'agent'];
const CONTROL = /\p{Cc}/gu;

/** At most `max` code points; a cut text ends with `...`. */
export function bound(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 3)).join('')}...`;
}

/** Diagnostics rows: unknown source prefixes are treated as `user` (openspec console). */
export function invalidRows(invalid: Record<string, string[]>): InvalidPackageRow[] {
  return Object.entries(invalid)
    .map(([key, messages]) => {
      const colon = key.indexOf(':');
      const prefix = colon >= 0 ? key.slice(0, colon) : '';
      const source = (SOURCES as readonly string[]).includes(prefix) ? (prefix as SkillSource) : 'user';
      const directory = bound((colon >= 0 ? key.slice(colon + 1) : key).replace(CONTROL, ' '), 80);
      const errors = (Array.isArray(messages) ? messages : [])
        .slice(0, 3)
        .map((message) => bound(String(message).replace(CONTROL, ' ').trim(), 240));
      return { key, source, directory, errors, removable: source !== 'builtin' };
    })
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Manageable in the market: mutable and not built-in. */
export function isManageable(skill: SkillRecord): boolean {
  return skill.mutable && skill.source !== 'builtin';
}

/** The status badge: a disabled Skill always shows disabled. */
export function statusOf(skill: SkillRecord): SkillRecord['availability'] {
  return skill.enabled ? skill.availability : 'disabled';
}

export function pageCount(total: number, pageSize: number): number {
  return Math.max(1, Math.ceil(total / pageSize));
}

/** Live validation of an edited SKILL.md with the server's own rules (`@cashcode/skill-format`). */
export function draftError(content: string, name: string): string | null {
  const result = parseSkillMarkdown(content, { expectedName: name });
  return result.ok ? null : result.error;
}

/** Size label of an upload: `max(1, ceil(bytes / 1024))` KB. */
export function sizeKb(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

/** The record's `metadata` as `key: value` text (the server keeps lists and numbers as text), at most 3, 80 chars each. */
export function metadataText(record: Pick<SkillRecord, 'metadata'>): string[] {
  return Object.entries(record.metadata ?? {})
    .slice(0, 3)
    .map(([key, value]) => {
      const text = `${key}: ${value}`;
      return text.length > 80 ? `${text.slice(0, 79)}…` : text;
    });
}

/** A Skill archive: `.zip`, or `.skill` (the Agent Skills packager's ZIP). */
export function isZipName(name: string): boolean {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.zip') || lower.endsWith('.skill');
}

/** What a refused import lets the user do next: confirm replacing a built-in, or choose among the archive's Skills. */
export type ImportFollowUp =
  | { kind: 'replace_builtin' }
  | { kind: 'select'; candidates: SkillArchiveCandidate[] }
  | null;

export function importFollowUp(status: number, code: string | undefined, problem: Readonly<Record<string, unknown>>): ImportFollowUp {
  if (status === 409 && problem['replace_builtin'] === true) return { kind: 'replace_builtin' };
  if (status === 422 && code === 'skill_archive_multiple' && Array.isArray(problem['skills'])) {
    const candidates = (problem['skills'] as unknown[]).filter(
      (item): item is SkillArchiveCandidate =>
        isRecord(item) &&
        typeof item['path'] === 'string' &&
        (item['name'] === null || typeof item['name'] === 'string') &&
        (item['error'] === null || typeof item['error'] === 'string'),
    );
    return { kind: 'select', candidates };
  }
  return null;
}

/** The local date and time a snapshot id (`<epoch_ms>-<8 hex>`) was taken, or null. */
export function versionTime(version: string, locale: string): string | null {
  const match = /^(\d{1,16})-[0-9a-f]{8}$/.exec(version);
  if (!match) return null;
  const date = new Date(Number(match[1]));
  if (Number.isNaN(date.getTime())) return null;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'medium' }).format(date);
}
