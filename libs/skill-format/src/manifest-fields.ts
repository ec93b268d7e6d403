/**
 * The frontmatter fields with a value shape of their own, each checked and normalised: string lists, the
 * `requires`/`optional` mappings, `allowed-tools`, `metadata` (values kept as text) and the optional texts
 * (`license`, `compatibility`). Each returns the normalised value, or a marker (`null`, `false` or a message) that
 * `parseSkillMarkdown` turns into the field's validation message.
 */
import {
  ALLOWED_TOOLS_MAX_ENTRIES,
  METADATA_MAX_ENTRIES,
  REQUIREMENT_KEYS,
  SKILL_MD_MESSAGES,
  type SkillRequirements,
} from './skill-md-rules';
import { codePointCount } from './text-length';

/** A YAML mapping: an object that is not a list or a date. */
export function isPlainMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** A list of non-empty (trimmed) strings, or null when the value is not one. Absent → []. */
export function stringList(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || item.trim() === '') return null;
    out.push(item.trim());
  }
  return out;
}

function emptyRequirements(): SkillRequirements {
  return { tools: [], mcp_servers: [], bins: [], env: [] };
}

export function requirements(field: 'requires' | 'optional', value: unknown): SkillRequirements | string {
  if (value === undefined || value === null) return emptyRequirements();
  if (!isPlainMapping(value)) return SKILL_MD_MESSAGES.mapping(field);
  const out = emptyRequirements();
  for (const key of REQUIREMENT_KEYS) {
    const list = stringList(value[key]);
    if (list === null) return SKILL_MD_MESSAGES.stringList(`${field}.${key}`);
    out[key] = list;
  }
  return out;
}

/**
 * Splits an `allowed-tools` string: entries separated by whitespace or commas, except inside parentheses
 * (`Bash(git add:*) Read, Grep` → `Bash(git add:*)`, `Read`, `Grep`).
 */
export function splitAllowedTools(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth++;
    if (char === ')' && depth > 0) depth--;
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      if (current.trim() !== '') out.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

export function allowedTools(value: unknown): string[] | null | false {
  if (value === undefined || value === null) return null;
  let entries: string[];
  if (typeof value === 'string') entries = splitAllowedTools(value);
  else if (Array.isArray(value)) {
    entries = [];
    for (const item of value) {
      if (typeof item !== 'string' || item.trim() === '') return false;
      entries.push(item.trim());
    }
  } else return false;
  if (entries.length > ALLOWED_TOOLS_MAX_ENTRIES) return false;
  return entries.length > 0 ? entries : null;
}

/** A YAML scalar as text (dates as ISO dates), or undefined when it has no text form. */
export function scalarText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw);
  if (raw === null) return '';
  if (raw instanceof Date && !Number.isNaN(raw.getTime())) {
    const iso = raw.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return undefined;
}

/** Plain JSON of a metadata value (scalars as JSON values, dates as text), or undefined when it cannot be represented. */
function jsonValue(raw: unknown): unknown {
  if (ArrayBuffer.isView(raw)) return undefined; // !!binary
  if (typeof raw === 'bigint') return Number.isSafeInteger(Number(raw)) ? Number(raw) : String(raw);
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : String(raw);
  if (typeof raw === 'string' || typeof raw === 'boolean' || raw === null) return raw;
  if (raw instanceof Date) return scalarText(raw);
  if (Array.isArray(raw)) {
    const items = raw.map(jsonValue);
    return items.includes(undefined) ? undefined : items;
  }
  if (isPlainMapping(raw)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) {
      const item = jsonValue(value);
      if (item === undefined) return undefined;
      out[key] = item;
    }
    return out;
  }
  return undefined;
}

/** metadata kept as text (openspec skills "Requirement: SKILL.md validation"); false when a value has no text form. */
export function metadataMap(value: unknown): Record<string, string> | false {
  if (value === undefined || value === null) return {};
  if (!isPlainMapping(value) || ArrayBuffer.isView(value)) return false;
  const entries = Object.entries(value);
  if (entries.length > METADATA_MAX_ENTRIES) return false;
  const out: Record<string, string> = {};
  for (const [key, raw] of entries) {
    let text = Array.isArray(raw) || isPlainMapping(raw) || ArrayBuffer.isView(raw) ? undefined : scalarText(raw);
    if (text === undefined) {
      const json = jsonValue(raw);
      if (json === undefined) return false;
      text = JSON.stringify(json);
    }
    out[key] = text;
  }
  return out;
}

export function optionalText(value: unknown, max: number): string | null | false {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') return false;
  const text = value.trim();
  if (text === '' || codePointCount(text) > max) return false;
  return text;
}
