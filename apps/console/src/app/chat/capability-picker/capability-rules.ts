/**
 * The composer's `@` capability picker as pure functions (openspec console): trigger parsing, the client-side filter,
 * keyboard navigation, text editing when an item is chosen, selection chips and the normalisation of persisted
 * receipts. Identity rules, the label limit and the selection cap come from @cashcode/contracts.
 */
import {
  isRecord,
  MAX_LABEL_CHARS,
  MAX_SELECTIONS,
  MCP_SERVER_NAME_PATTERN,
  SKILL_NAME_PATTERN,
  codePointLength,
  type LoadedSkillReceipt,
  type McpConnectorReceipt,
  type SkillReceipt,
} from '@cashcode/contracts';

// ---- trigger --------------------------------------------------------------------------------------------

export interface MentionTrigger {
  /** index of the `@` in the text */
  start: number;
  /** the characters between the `@` and the caret */
  query: string;
}

/** `@` at the start or after whitespace, followed by anything but whitespace and `@`, right before the caret. */
const TRIGGER_PATTERN = /(?:^|\s)@([^\s@]*)$/;

/** The `@` mention the caret is in, or null (`mail@example.com` is not a mention). */
export function findMentionTrigger(text: string, caret: number): MentionTrigger | null {
  const before = text.slice(0, Math.max(0, Math.min(caret, text.length)));
  const match = TRIGGER_PATTERN.exec(before);
  if (match === null) return null;
  const query = match[1];
  return { start: before.length - query.length - 1, query };
}

/** Removes `@query` (from the `@` up to the caret); the caret goes where the `@` was. */
export function removeMention(text: string, trigger: MentionTrigger, caret: number): { text: string; caret: number } {
  return { text: text.slice(0, trigger.start) + text.slice(caret), caret: trigger.start };
}

// ---- items and filter -----------------------------------------------------------------------------------

export type CapabilityKind = 'mcp' | 'skill';

/** Level 1 of the picker, in this order (index 0 = MCP, 1 = Skill). */
export const CAPABILITY_KINDS: readonly CapabilityKind[] = ['mcp', 'skill'];

export interface CapabilityItem {
  kind: CapabilityKind;
  /** Skill name or MCP server name */
  name: string;
  /** display name ('' when none) */
  displayName: string;
  description: string;
  /** callable tools (MCP only) */
  toolCount: number | null;
}

/** Case-insensitive substring over display name, name and description. */
export function filterCapabilities(items: readonly CapabilityItem[], query: string): CapabilityItem[] {
  const needle = query.trim().toLowerCase();
  if (needle === '') return [...items];
  return items.filter((item) =>
    [item.displayName, item.name, item.description].some((field) => field.toLowerCase().includes(needle)),
  );
}

// ---- keyboard -------------------------------------------------------------------------------------------

export type PickerLevel = 'category' | CapabilityKind;

export interface PickerView {
  level: PickerLevel;
  /** the active row */
  active: number;
  /** rows on the current level */
  count: number;
  query: string;
}

export type PickerKeyAction =
  | { kind: 'none' }
  | { kind: 'move'; active: number }
  | { kind: 'choose'; index: number }
  | { kind: 'close' }
  | { kind: 'back' };

/** `(i ± 1) mod n`, 0 when there are no rows. */
export function moveActive(active: number, delta: 1 | -1, count: number): number {
  if (count <= 0) return 0;
  return (((active + delta) % count) + count) % count;
}

/** What a key does while the picker is open; `none` leaves the key to the textarea. */
export function pickerKeyAction(view: PickerView, key: string): PickerKeyAction {
  switch (key) {
    case 'ArrowDown':
      return { kind: 'move', active: moveActive(view.active, 1, view.count) };
    case 'ArrowUp':
      return { kind: 'move', active: moveActive(view.active, -1, view.count) };
    case 'Enter':
      return { kind: 'choose', index: view.active };
    case 'Escape':
      return { kind: 'close' };
    case 'Backspace':
      return view.level !== 'category' && view.query === '' ? { kind: 'back' } : { kind: 'none' };
    default:
      return { kind: 'none' };
  }
}

// ---- chips ----------------------------------------------------------------------------------------------

export interface CapabilitySelections {
  skills: SkillReceipt[];
  mcp: McpConnectorReceipt[];
}

export const NO_SELECTIONS: CapabilitySelections = { skills: [], mcp: [] };

export type SelectionError = 'tooMany' | 'invalidSkill' | 'invalidMcp' | 'labelTooLong';

export type SelectionResult = { ok: true; selections: CapabilitySelections } | { ok: false; error: SelectionError };

export function selectionCount(selections: CapabilitySelections): number {
  return selections.skills.length + selections.mcp.length;
}

export function isSelected(selections: CapabilitySelections, item: Pick<CapabilityItem, 'kind' | 'name'>): boolean {
  return item.kind === 'skill'
    ? selections.skills.some((skill) => skill.name === item.name)
    : selections.mcp.some((connector) => connector.server === item.name);
}

/**
 * Adds the chip of a chosen item (skill receipt `{name, label}`, MCP receipt `{server, label}`, label = display name
 * or name). Choosing one that is already there changes nothing; more than MAX_SELECTIONS in total is refused.
 */
export function addSelection(selections: CapabilitySelections, item: CapabilityItem): SelectionResult {
  const identity = item.name.trim();
  const pattern = item.kind === 'skill' ? SKILL_NAME_PATTERN : MCP_SERVER_NAME_PATTERN;
  if (!pattern.test(identity)) return { ok: false, error: item.kind === 'skill' ? 'invalidSkill' : 'invalidMcp' };
  if (isSelected(selections, { kind: item.kind, name: identity })) return { ok: true, selections };
  const label = item.displayName.trim() || identity;
  if (codePointLength(label) > MAX_LABEL_CHARS) return { ok: false, error: 'labelTooLong' };
  if (selectionCount(selections) >= MAX_SELECTIONS) return { ok: false, error: 'tooMany' };
  return item.kind === 'skill'
    ? { ok: true, selections: { ...selections, skills: [...selections.skills, { name: identity, label }] } }
    : { ok: true, selections: { ...selections, mcp: [...selections.mcp, { server: identity, label }] } };
}

export function removeSelection(
  selections: CapabilitySelections,
  kind: CapabilityKind,
  identity: string,
): CapabilitySelections {
  return kind === 'skill'
    ? { ...selections, skills: selections.skills.filter((skill) => skill.name !== identity) }
    : { ...selections, mcp: selections.mcp.filter((connector) => connector.server !== identity) };
}

// ---- persisted receipts (openspec console) ------------------------------------------------------------------

function normalizeRows<K extends 'name' | 'server'>(
  raw: unknown,
  key: K,
  pattern: RegExp,
  cap: number,
): Array<{ [P in K]: string } & { label?: string }> {
  if (!Array.isArray(raw)) return [];
  const rows: Array<{ [P in K]: string } & { label?: string }> = [];
  const seen = new Set<string>();
  for (const entry of raw) {
    if (rows.length >= cap) break;
    if (!isRecord(entry)) continue;
    const value = entry[key];
    if (typeof value !== 'string') continue;
    const identity = value.trim();
    if (!pattern.test(identity) || seen.has(identity)) continue;
    seen.add(identity);
    const row = { [key]: identity } as { [P in K]: string } & { label?: string };
    const label = entry['label'];
    if (typeof label === 'string') {
      const trimmed = label.trim();
      if (trimmed !== '' && codePointLength(trimmed) <= MAX_LABEL_CHARS) row.label = trimmed;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * Receipts of a loaded user row (openspec console): rows with a valid identity only, bad labels dropped (the row is
 * kept), de-duplicated, Skills capped at MAX_SELECTIONS and MCP rows at what is left; empty lists omitted.
 */
export function normalizePersistedReceipts(row: { mentioned_skills?: unknown; selected_mcp_connectors?: unknown }): {
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
} {
  const skills = normalizeRows(row.mentioned_skills, 'name', SKILL_NAME_PATTERN, MAX_SELECTIONS);
  const mcp = normalizeRows(
    row.selected_mcp_connectors,
    'server',
    MCP_SERVER_NAME_PATTERN,
    MAX_SELECTIONS - skills.length,
  );
  const out: { mentioned_skills?: SkillReceipt[]; selected_mcp_connectors?: McpConnectorReceipt[] } = {};
  if (skills.length > 0) out.mentioned_skills = skills as SkillReceipt[];
  if (mcp.length > 0) out.selected_mcp_connectors = mcp as McpConnectorReceipt[];
  return out;
}

/** Skill-loaded receipts of a user row (`loaded_skills`), kept only when well-formed; at most one per Skill. */
export function normalizeLoadedSkills(raw: unknown): LoadedSkillReceipt[] {
  if (!Array.isArray(raw)) return [];
  const out: LoadedSkillReceipt[] = [];
  for (const entry of raw) {
    if (!isRecord(entry)) continue;
    const { name, version, hash } = entry;
    if (typeof name !== 'string' || !SKILL_NAME_PATTERN.test(name)) continue;
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) continue;
    if (out.some((receipt) => receipt.name === name)) continue;
    out.push({ name, version, hash: typeof hash === 'string' ? hash : '' });
  }
  return out;
}
