/**
 * The rules of a SKILL.md as data: the limits, the exact validation messages (openspec skills "SKILL.md validation")
 * and the shape of a parsed manifest. The parser (`skill-md.ts`) checks them; the server and the console's editor
 * show the same messages.
 */
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

/** Whether a (trimmed) name is a valid Skill name. */
export function isValidSkillName(name: string): boolean {
  return SKILL_NAME_PATTERN.test(name);
}
