/**
 * Skills REST shapes (openspec skills "Requirement: REST") and the skill receipts shown with a user message. No
 * response carries an absolute host path: `path` is the package's logical location `skills/<source>/<name>`.
 */

export type SkillSource = 'builtin' | 'user' | 'agent';
export const SKILL_SOURCES: readonly SkillSource[] = ['builtin', 'user', 'agent'];
export type SkillAvailability = 'available' | 'missing_dependency' | 'disabled';
export const SKILL_AVAILABILITIES: readonly SkillAvailability[] = ['available', 'missing_dependency', 'disabled'];

export interface SkillRequirementsRecord {
  tools: string[];
  mcp_servers: string[];
  bins: string[];
  env: string[];
}

export interface SkillRecord {
  name: string;
  /** frontmatter display_name, or the name */
  display_name: string;
  description: string;
  version: number;
  /** additive: the frontmatter `version` as written (`3`, `1.0.2`); null when absent */
  version_label: string | null;
  tags: string[];
  triggers: string[];
  always: boolean;
  source: SkillSource;
  enabled: boolean;
  availability: SkillAvailability;
  /** `bin:x`, `env:X`, `tool:x`, `mcp:x` */
  missing: string[];
  /** sha256 hex of SKILL.md */
  hash: string;
  /** lower-precedence sources holding a package of the same name */
  shadowed_sources: SkillSource[];
  /** additive: a user or agent package that hides a built-in Skill of the same name (deleting it restores the built-in) */
  shadows_builtin: boolean;
  validation_errors: string[];
  requires: SkillRequirementsRecord;
  optional: SkillRequirementsRecord;
  /** source !== 'builtin' */
  mutable: boolean;
  /** additive (Agent Skills specification fields) */
  license: string | null;
  compatibility: string | null;
  metadata: Record<string, string>;
  /** tools the model may call while this Skill is loaded; null → no restriction */
  allowed_tools: string[] | null;
  /**
   * additive: what the Skill's `allowed-tools` would pre-approve and whether the owner granted it for this exact
   * content; null when the Skill lists no `allowed-tools` (REST responses only; absent inside the catalog)
   */
  pre_approvals?: SkillPreApprovals | null;
}

/** What one `allowed-tools` entry would pre-approve, in words the owner can judge. */
export type SkillPreApprovalKind =
  /** `Bash`, `Bash(*)`: every shell command */
  | 'any_command'
  /** `Bash(git status:*)`: commands starting with these words */
  | 'command_prefix'
  /** `Bash(npm test)`: exactly this command */
  | 'exact_command'
  /** `Read` → `read_file`: one tool, any arguments */
  | 'tool'
  /** `mcp__<server>`: every tool of an MCP server */
  | 'mcp_server'
  /** `mcp__<server>__<tool>`: one MCP tool */
  | 'mcp_tool'
  /** an entry that pre-approves nothing (an argument on a non-Bash tool, a malformed entry) */
  | 'ignored';

export interface SkillPreApprovalItem {
  /** the entry as written in `allowed-tools` */
  entry: string;
  kind: SkillPreApprovalKind;
  /** the command words (command_prefix, exact_command), the tool (tool, mcp_tool) or the server (mcp_server, mcp_tool) */
  value: string;
  server?: string;
  /** true when the entry lets the model run any command (or any code through a program that runs other code) */
  broad: boolean;
  /** one English sentence: `any shell command`, `commands starting with \`git status\``, `tool read_file`, … */
  text: string;
}

/**
 * The owner's grant of a Skill's `allowed-tools` (openspec approvals "Requirement: Skills pre-approve only with the
 * owner's grant"): pre-approvals apply only while `granted` is true, i.e. the owner granted them for the package whose
 * content hash is `hash` (every file of the package, not only SKILL.md). Any change of the package drops the grant.
 */
export interface SkillPreApprovals {
  /** the `allowed-tools` entries as written */
  requested: string[];
  granted: boolean;
  /** sha256 hex of the whole package (SKILL.md and every supporting file): the value to grant with */
  hash: string;
  summary: SkillPreApprovalItem[];
  /** some entry is broad (any command): the console warns */
  broad: boolean;
  /** ISO 8601 time of the grant in force; absent when not granted */
  granted_at?: string;
}

/** `POST /api/skills/{name}/pre-approvals`: grants what the owner saw, bound to that package hash. */
export interface GrantSkillPreApprovalsRequest {
  /** `pre_approvals.hash` as shown to the owner; another hash (the Skill changed since) → 409 */
  hash: string;
}

/** `POST /api/skills/import`: the first imported Skill's record (as before) and, additively, every imported one. */
export interface SkillImportResponse extends SkillRecord {
  imported: SkillRecord[];
}

/** A record with its logical location (create, replace, enable, rollback, get). */
export interface SkillRecordWithPath extends SkillRecord {
  /** `skills/<source>/<name>` — never an absolute host path */
  path: string;
}

export interface SkillDetail extends SkillRecordWithPath {
  /** first 4000 chars of the body, stripped */
  body_preview: string;
  body_truncated: boolean;
  /** snapshot ids, newest first */
  versions: string[];
}

export interface SkillReplaceResponse extends SkillRecordWithPath {
  /** the snapshot taken before the replace */
  snapshot: string;
}

export interface SkillListResponse {
  items: SkillRecord[];
  total: number;
  page: number;
  page_size: number;
  /** `<source>:<dir>` → [sanitised error]; the full diagnostics, unaffected by filters and paging */
  invalid: Record<string, string[]>;
}

export interface SkillListQuery {
  source?: SkillSource;
  enabled?: boolean;
  availability?: SkillAvailability;
  query?: string;
  page?: number;
  page_size?: number;
}

export interface CreateSkillRequest {
  name: string;
  content: string;
  /** default `user`; `builtin` → 403 */
  source?: SkillSource;
  /** package-relative path → UTF-8 text */
  support_files?: Record<string, string>;
  /** default true */
  enabled?: boolean;
}

export interface ReplaceSkillRequest {
  content: string;
  /** null/absent → keep every other file; an object → rebuild the package with only these files */
  support_files?: Record<string, string> | null;
  /** the hash the editor read; a different current hash → 409 */
  expected_hash?: string | null;
}

export interface SetSkillEnabledRequest {
  enabled: boolean;
}

export interface SkillContentResponse {
  name: string;
  display_name: string;
  content: string;
  hash: string;
  source: SkillSource;
  mutable: boolean;
}

export type SkillValidationResponse =
  | { valid: true; name: string; hash: string; errors: [] }
  | { valid: false; errors: string[] };

export interface SkillVersionsResponse {
  name: string;
  versions: string[];
}

export interface DeleteInvalidSkillResponse {
  source: SkillSource;
  directory: string;
  /** `invalid/<source>/<package_id>/<version>` */
  snapshot: string;
}

/**
 * A Skill loaded for a turn (explicit selection), shown with the user message as a small chip (not an assistant
 * bubble). Parsed from the persisted receipt `[Skill loaded: <name>@v<version> sha256:<hash>]`.
 */
export interface LoadedSkillReceipt {
  name: string;
  version: number;
  hash: string;
}

/** `[Skill loaded: <name>@v<version> sha256:<64 hex>]` (openspec skills). */
export const SKILL_RECEIPT_PATTERN = /^\[Skill loaded: ([a-z0-9][a-z0-9._-]{0,63})@v(\d{1,15}) sha256:([0-9a-f]{64})\]$/;

export function formatSkillReceipt(receipt: LoadedSkillReceipt): string {
  return `[Skill loaded: ${receipt.name}@v${receipt.version} sha256:${receipt.hash}]`;
}

/** The receipt a persisted assistant record carries, or null when the text is not exactly a skill receipt. */
export function parseSkillReceipt(text: string): LoadedSkillReceipt | null {
  const match = SKILL_RECEIPT_PATTERN.exec(text.trim());
  if (!match) return null;
  return { name: match[1] as string, version: Number(match[2]), hash: match[3] as string };
}
