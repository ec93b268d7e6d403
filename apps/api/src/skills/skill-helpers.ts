/** Small helpers shared by the Skills services and the skill tools. */
import { createHash } from 'node:crypto';
import type { SkillSource } from '@cashcode/contracts';
import { sanitizeDiagnostic } from './skill-catalog';
import type { SkillStore } from './skill-store';

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

/** A diagnostic with the store's root directories replaced by their logical names. */
export function sanitizeStoreDiagnostic(store: SkillStore, message: string): string {
  const roots = store.roots;
  return sanitizeDiagnostic(message, [roots.builtin, roots.user, roots.agent, roots.snapshots]);
}
