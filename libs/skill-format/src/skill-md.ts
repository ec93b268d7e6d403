/**
 * SKILL.md parsing and validation (the rules of openspec skills "SKILL.md validation", in that order, with the original server's messages), plus the Agent Skills
 * specification fields this project also accepts: `license`, `compatibility`, `metadata` (a map of
 * values kept as text) and `allowed-tools`; `version` may be any version text.
 *
 * Framework-free and synchronous: the API validates packages with it and the console editor validates drafts live.
 * YAML uses 1.1 semantics like PyYAML's safe_load (`yes`/`on` are booleans, unquoted dates are dates, unknown tags
 * are errors, duplicate keys keep the last value).
 */
import { parseDocument } from 'yaml';

export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** UTF-8 bytes of a SKILL.md */
export const SKILL_MD_MAX_BYTES = 80_000;
export const DISPLAY_NAME_MAX_CHARS = 80;
/** Agent Skills specification: `compatibility` is 1–500 characters */
export const COMPATIBILITY_MAX_CHARS = 500;
export const LICENSE_MAX_CHARS = 500;
export const METADATA_MAX_ENTRIES = 64;
export const ALLOWED_TOOLS_MAX_ENTRIES = 64;
export const VERSION_MAX_CHARS = 64;
/**
 * Limits checked before the frontmatter reaches the YAML parser, whose time grows faster than the text on deep flow
 * collections (`[[[[…`) and on long runs of blank lines: far above any real frontmatter (a few hundred bytes, a
 * description of at most a paragraph, flat lists and mappings), low enough that the parse of what passes is a
 * millisecond or two.
 */
export const FRONTMATTER_MAX_BYTES = 16_384;
export const FRONTMATTER_MAX_FLOW_DEPTH = 16;
export const FRONTMATTER_MAX_BLANK_LINES = 64;

export const SKILL_MD_MESSAGES = {
  empty: 'SKILL.md cannot be empty',
  tooLarge: 'SKILL.md is too large',
  noFrontmatter: 'SKILL.md must start with YAML frontmatter',
  invalidYaml: (detail: string) => `invalid YAML frontmatter: ${detail}`,
  frontmatterTooLarge: `frontmatter must be at most ${FRONTMATTER_MAX_BYTES} bytes`,
  frontmatterTooDeep: `frontmatter lists and mappings in [ ] or { } can be nested at most ${FRONTMATTER_MAX_FLOW_DEPTH} deep`,
  frontmatterBlankLines: `frontmatter can have at most ${FRONTMATTER_MAX_BLANK_LINES} consecutive blank lines`,
  notMapping: 'frontmatter must be a mapping',
  nameDescriptionStrings: 'name and description must be strings',
  invalidName: 'invalid Skill name; use lowercase letters, numbers, dots, underscores, and hyphens',
  nameMismatch: 'frontmatter name must match the package directory',
  emptyDescription: 'description cannot be empty',
  emptyBody: 'SKILL.md body cannot be empty',
  version: 'version must be a positive integer or a non-empty version string',
  always: 'always must be a boolean',
  displayNameString: 'display_name must be a string',
  displayNameEmpty: 'display_name cannot be empty',
  displayNameLength: `display_name must be at most ${DISPLAY_NAME_MAX_CHARS} characters`,
  displayNameControl: 'display_name cannot contain control characters',
  stringList: (field: string) => `${field} must be a list of non-empty strings`,
  mapping: (field: string) => `${field} must be a mapping`,
  license: `license must be a non-empty string of at most ${LICENSE_MAX_CHARS} characters`,
  compatibility: `compatibility must be a non-empty string of at most ${COMPATIBILITY_MAX_CHARS} characters`,
  metadata: `metadata must be a mapping of at most ${METADATA_MAX_ENTRIES} values (text, numbers, booleans, dates, lists or mappings of these)`,
  allowedTools: `allowed-tools must be a string or a list of at most ${ALLOWED_TOOLS_MAX_ENTRIES} non-empty strings`,
} as const;

export interface SkillRequirements {
  tools: string[];
  mcp_servers: string[];
  bins: string[];
  env: string[];
}

export const REQUIREMENT_KEYS: readonly (keyof SkillRequirements)[] = ['tools', 'mcp_servers', 'bins', 'env'];

export interface SkillManifest {
  name: string;
  description: string;
  /** the integer `version`; 1 when absent or when the version is a text such as `1.0.2` */
  version: number;
  /** the version as written (`3`, `1.0.2`, `2024-06`); null when absent */
  version_label: string | null;
  always: boolean;
  /** trimmed; null when absent */
  display_name: string | null;
  tags: string[];
  triggers: string[];
  requires: SkillRequirements;
  optional: SkillRequirements;
  /** Agent Skills specification fields */
  license: string | null;
  compatibility: string | null;
  /** values as text: strings unchanged, numbers/booleans/dates as written by String(), lists and mappings as JSON */
  metadata: Record<string, string>;
  /** tool names from `allowed-tools`; null when the field is absent or empty */
  allowed_tools: string[] | null;
}

export type SkillMarkdownResult =
  | { ok: true; manifest: SkillManifest; body: string }
  | { ok: false; error: string };

export interface ParseSkillMarkdownOptions {
  /** the package directory name the frontmatter name must equal (rule 8); omitted → not checked */
  expectedName?: string;
}

/** `---`, optional spaces, newline, YAML, newline, `---`, optional spaces, newline or end (CRLF accepted). */
const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const CONTROL_OR_FORMAT = /\p{C}/u;

/** UTF-8 byte length without allocating an encoded copy. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

export function codePointCount(text: string): number {
  let count = 0;
  for (const _char of text) count++;
  return count;
}

/** Whether a (trimmed) name is a valid Skill name. */
export function isValidSkillName(name: string): boolean {
  return SKILL_NAME_PATTERN.test(name);
}

function isPlainMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** The first line of a YAML parser message, without the code frame. */
function yamlMessage(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.replace(/:\s*$/, '').trim() || 'parse error';
}

/**
 * What would make the YAML parse super-linear, found in one linear scan: more than FRONTMATTER_MAX_BYTES, flow
 * brackets nested deeper than FRONTMATTER_MAX_FLOW_DEPTH (counted outside quoted scalars and comments), or more
 * than FRONTMATTER_MAX_BLANK_LINES blank lines in a row. Null when the frontmatter may be parsed.
 * A quote opens a quoted scalar only where a node can start (first on its line, or after `:`, `-`, `?`, `,`, `[`
 * or `{` and blanks); elsewhere, as in `it's`, it is text. Brackets in plain text are counted too, which can only
 * refuse more, never let a deep collection through.
 */
function frontmatterLimitProblem(source: string): string | null {
  if (utf8ByteLength(source) > FRONTMATTER_MAX_BYTES) return SKILL_MD_MESSAGES.frontmatterTooLarge;
  let depth = 0;
  let blankLines = 0;
  let lineBlank = true;
  /** the last character on this line that is not a blank ('' at the line start) */
  let previous = '';
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\n') {
      blankLines = lineBlank ? blankLines + 1 : 0;
      if (blankLines > FRONTMATTER_MAX_BLANK_LINES) return SKILL_MD_MESSAGES.frontmatterBlankLines;
      lineBlank = true;
      previous = '';
      continue;
    }
    if (char === ' ' || char === '\t' || char === '\r') continue;
    lineBlank = false;
    if (char === '#' && (i === 0 || /[ \t\n]/.test(source[i - 1]!))) {
      // a comment runs to the end of the line
      while (i + 1 < source.length && source[i + 1] !== '\n') i++;
      continue;
    }
    if ((char === '"' || char === "'") && (previous === '' || ':-?,[{'.includes(previous))) {
      // a quoted scalar: `\` escapes in double quotes, `''` is a quote in single quotes; it may span lines
      for (i++; i < source.length; i++) {
        const inner = source[i]!;
        if (inner === '\n') {
          // blank lines inside a quoted scalar count as well (the parser folds them)
          blankLines = lineBlank ? blankLines + 1 : 0;
          if (blankLines > FRONTMATTER_MAX_BLANK_LINES) return SKILL_MD_MESSAGES.frontmatterBlankLines;
          lineBlank = true;
        } else if (inner !== ' ' && inner !== '\t' && inner !== '\r') lineBlank = false;
        if (char === '"' && inner === '\\') i++;
        else if (inner === char && char === "'" && source[i + 1] === "'") i++;
        else if (inner === char) break;
      }
      previous = char;
      continue;
    }
    if (char === '[' || char === '{') {
      depth++;
      if (depth > FRONTMATTER_MAX_FLOW_DEPTH) return SKILL_MD_MESSAGES.frontmatterTooDeep;
    } else if ((char === ']' || char === '}') && depth > 0) depth--;
    previous = char;
  }
  return null;
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

function parseYaml(source: string): Parsed {
  const limit = frontmatterLimitProblem(source);
  if (limit !== null) return { ok: false, error: limit };
  let doc;
  try {
    doc = parseDocument(source, {
      version: '1.1',
      uniqueKeys: false,
      intAsBigInt: true,
      prettyErrors: false,
      logLevel: 'silent',
    });
  } catch (err) {
    return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(err instanceof Error ? err.message : String(err))) };
  }
  const problem = doc.errors[0] ?? doc.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED');
  if (problem) return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(problem.message)) };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(err instanceof Error ? err.message : String(err))) };
  }
}

/** A list of non-empty (trimmed) strings, or null when the value is not one. Absent → []. */
function stringList(value: unknown): string[] | null {
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

function requirements(field: 'requires' | 'optional', value: unknown): SkillRequirements | string {
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

function allowedTools(value: unknown): string[] | null | false {
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
function scalarText(raw: unknown): string | undefined {
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
function metadataMap(value: unknown): Record<string, string> | false {
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

function optionalText(value: unknown, max: number): string | null | false {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') return false;
  const text = value.trim();
  if (text === '' || codePointCount(text) > max) return false;
  return text;
}

/**
 * Validates a SKILL.md text (rules 1–15 in order, then the Agent Skills fields) and returns the
 * manifest and the body (the text after the closing delimiter, trimmed).
 */
export function parseSkillMarkdown(content: string, options: ParseSkillMarkdownOptions = {}): SkillMarkdownResult {
  const fail = (error: string): SkillMarkdownResult => ({ ok: false, error });
  if (content.trim() === '') return fail(SKILL_MD_MESSAGES.empty);
  if (utf8ByteLength(content) > SKILL_MD_MAX_BYTES) return fail(SKILL_MD_MESSAGES.tooLarge);
  const match = FRONTMATTER.exec(content);
  if (!match) return fail(SKILL_MD_MESSAGES.noFrontmatter);
  const parsed = parseYaml(match[1] ?? '');
  if (!parsed.ok) return fail(parsed.error);
  const data = parsed.value;
  if (!isPlainMapping(data)) return fail(SKILL_MD_MESSAGES.notMapping);
  const rawName = data['name'];
  const rawDescription = data['description'];
  if (typeof rawName !== 'string' || typeof rawDescription !== 'string') {
    return fail(SKILL_MD_MESSAGES.nameDescriptionStrings);
  }
  const name = rawName.trim();
  if (!isValidSkillName(name)) return fail(SKILL_MD_MESSAGES.invalidName);
  if (options.expectedName !== undefined && name !== options.expectedName) return fail(SKILL_MD_MESSAGES.nameMismatch);
  const description = rawDescription.trim();
  if (description === '') return fail(SKILL_MD_MESSAGES.emptyDescription);
  const body = content.slice(match[0].length).trim();
  if (body === '') return fail(SKILL_MD_MESSAGES.emptyBody);

  const rawVersion = data['version'];
  let version = 1;
  let versionLabel: string | null = null;
  if (rawVersion !== undefined && rawVersion !== null) {
    // integers parse as bigint (intAsBigInt); any other version (1.0.2, 2024-06, 1.5) is kept as its text
    if (typeof rawVersion === 'bigint' && rawVersion >= 1n && rawVersion <= BigInt(Number.MAX_SAFE_INTEGER)) {
      version = Number(rawVersion);
      versionLabel = String(rawVersion);
    } else {
      const text = typeof rawVersion === 'boolean' ? undefined : scalarText(rawVersion)?.trim();
      if (text === undefined || text === '' || codePointCount(text) > VERSION_MAX_CHARS || CONTROL_OR_FORMAT.test(text)) {
        return fail(SKILL_MD_MESSAGES.version);
      }
      versionLabel = text;
    }
  }
  const rawAlways = data['always'];
  if (rawAlways !== undefined && typeof rawAlways !== 'boolean') return fail(SKILL_MD_MESSAGES.always);
  const always = rawAlways === true;

  let displayName: string | null = null;
  const rawDisplayName = data['display_name'];
  if (rawDisplayName !== undefined && rawDisplayName !== null) {
    const raw = rawDisplayName;
    if (typeof raw !== 'string') return fail(SKILL_MD_MESSAGES.displayNameString);
    const text = raw.trim();
    if (text === '') return fail(SKILL_MD_MESSAGES.displayNameEmpty);
    if (codePointCount(text) > DISPLAY_NAME_MAX_CHARS) return fail(SKILL_MD_MESSAGES.displayNameLength);
    if (CONTROL_OR_FORMAT.test(text)) return fail(SKILL_MD_MESSAGES.displayNameControl);
    displayName = text;
  }

  const tags = stringList(data['tags']);
  if (tags === null) return fail(SKILL_MD_MESSAGES.stringList('tags'));
  const triggers = stringList(data['triggers']);
  if (triggers === null) return fail(SKILL_MD_MESSAGES.stringList('triggers'));
  const requires = requirements('requires', data['requires']);
  if (typeof requires === 'string') return fail(requires);
  const optional = requirements('optional', data['optional']);
  if (typeof optional === 'string') return fail(optional);

  const license = optionalText(data['license'], LICENSE_MAX_CHARS);
  if (license === false) return fail(SKILL_MD_MESSAGES.license);
  const compatibility = optionalText(data['compatibility'], COMPATIBILITY_MAX_CHARS);
  if (compatibility === false) return fail(SKILL_MD_MESSAGES.compatibility);
  const metadata = metadataMap(data['metadata']);
  if (metadata === false) return fail(SKILL_MD_MESSAGES.metadata);
  const allowed = allowedTools(data['allowed-tools']);
  if (allowed === false) return fail(SKILL_MD_MESSAGES.allowedTools);

  return {
    ok: true,
    manifest: {
      name,
      description,
      version,
      version_label: versionLabel,
      always,
      display_name: displayName,
      tags,
      triggers,
      requires,
      optional,
      license,
      compatibility,
      metadata,
      allowed_tools: allowed,
    },
    body,
  };
}
