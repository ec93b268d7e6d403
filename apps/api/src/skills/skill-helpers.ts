/** Small helpers shared by the Skills services and the skill tools. */
import { createHash } from 'node:crypto';
import type { SkillSource } from '@cashcode/contracts';

export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How a package is named to users and the model: never an absolute host path. */
export function logicalPath(source: SkillSource, name: string): string {
  return `skills/${source}/${name}`;
}

export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/** At most `max` code points; a cut text ends with `...` (included in the limit). */
export function boundText(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return chars.slice(0, Math.max(0, max - 3)).join('') + '...';
}

/** Orders names by UTF-16 code units (the catalog's and the search's order). */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
