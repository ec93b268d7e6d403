/**
 * Diagnostics of invalid Skill packages (openspec skills): what is shown of a package that failed validation is
 * redacted (no host path, no control character), length-limited, keyed by `<source>:<dir>` and at most
 * MAX_INVALID_REPORTED packages; it is shown to the owner and never offered to the model.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { SkillSource } from '@cashcode/contracts';
import { boundText } from './skill-helpers';
import type { SkillRoots, SkillStore } from './skill-store';

export const MAX_INVALID_REPORTED = 100;
export const DIAGNOSTIC_KEY_MAX_CHARS = 80;
export const DIAGNOSTIC_MESSAGE_MAX_CHARS = 240;

export interface InvalidPackage {
  key: string;
  source: SkillSource;
  directory: string;
  error: string;
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

/** A diagnostic with the store's root directories replaced by their logical names. */
export function sanitizeStoreDiagnostic(store: SkillStore, message: string): string {
  const roots = store.roots;
  return sanitizeDiagnostic(message, [roots.builtin, roots.user, roots.agent, roots.snapshots]);
}

/**
 * The report of the invalid packages of a refresh: the first MAX_INVALID_REPORTED, each with a unique key (a clash
 * of the bounded keys gets a hash of the directory) and its sanitised message, as a list and as the REST map.
 */
export function reportInvalid(
  invalid: readonly InvalidPackage[],
  roots: SkillRoots,
): { list: InvalidPackage[]; map: Record<string, string[]> } {
  const known = [roots.builtin, roots.user, roots.agent, roots.snapshots];
  const map: Record<string, string[]> = {};
  const list: InvalidPackage[] = [];
  for (const item of invalid) {
    if (list.length >= MAX_INVALID_REPORTED) break;
    const packagePath = path.join(roots[item.source], item.directory);
    let key = diagnosticKey(item.source, item.directory);
    if (key in map) key = `${key}~${createHash('sha256').update(item.directory).digest('hex').slice(0, 8)}`;
    const message = sanitizeDiagnostic(item.error, [packagePath, ...known]);
    map[key] = [message];
    list.push({ ...item, key, error: message });
  }
  return { list, map };
}
