/**
 * Message metadata validation and sanitisation (openspec chat), shared by the gateway (authoritative) and the console
 * (to mirror the rules before sending and to normalise persisted receipts, openspec console).
 */
import { LLM_PROVIDERS, type LlmProvider } from './llm-provider';
import {
  MAX_LABEL_CHARS,
  MAX_MODEL_CHARS,
  MAX_SELECTIONS,
  MCP_SERVER_NAME_PATTERN,
  SKILL_NAME_PATTERN,
  type McpConnectorReceipt,
  type MessageMetadata,
  type SkillReceipt,
} from './ws';
import { isRecord } from './guards';

export type MetadataResult = { ok: true; metadata: MessageMetadata } | { ok: false; error: string };

/** Counts code points, like Python's len() of a str, which the original server's limits were written in. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Slices by code points (never splits a surrogate pair). */
export function sliceCodePoints(text: string, start: number, end?: number): string {
  return Array.from(text).slice(start, end).join('');
}

type LabelResult = { ok: true; label?: string } | { ok: false; error: string };

function sanitizeLabel(field: string, raw: unknown): LabelResult {
  if (raw === undefined || raw === null) return { ok: true };
  if (typeof raw !== 'string') return { ok: false, error: `${field}.label must be a string` };
  const cleaned = raw.split('\u0000').join('').trim();
  if (cleaned === '') return { ok: true };
  if (codePointLength(cleaned) > MAX_LABEL_CHARS) {
    return { ok: false, error: `${field}.label must be at most ${MAX_LABEL_CHARS} characters` };
  }
  return { ok: true, label: cleaned };
}

type RowsResult<T> = { ok: true; rows: T[] } | { ok: false; error: string };

function sanitizeRows<K extends 'name' | 'server'>(
  field: 'mentioned_skills' | 'selected_mcp_connectors',
  key: K,
  pattern: RegExp,
  raw: unknown,
): RowsResult<{ [P in K]: string } & { label?: string }> {
  if (raw === undefined || raw === null) return { ok: true, rows: [] };
  if (!Array.isArray(raw)) return { ok: false, error: `${field} must be a list` };
  const rows: Array<{ [P in K]: string } & { label?: string }> = [];
  const seen = new Set<string>();
  for (const entry of raw) {
    if (!isRecord(entry)) return { ok: false, error: `${field} entries must be objects` };
    const identity = entry[key];
    if (typeof identity !== 'string' || !pattern.test(identity.trim())) {
      return { ok: false, error: `${field}.${key} is invalid` };
    }
    const label = sanitizeLabel(field, entry['label']);
    if (!label.ok) return label;
    const id = identity.trim();
    if (seen.has(id)) continue;
    seen.add(id);
    const row = { [key]: id } as { [P in K]: string } & { label?: string };
    if (label.label !== undefined) row.label = label.label;
    rows.push(row);
  }
  return { ok: true, rows };
}

/** Validates and sanitises WS message metadata exactly as openspec chat (messages in English). */
export function sanitizeMessageMetadata(input: unknown): MetadataResult {
  if (input === undefined || input === null) return { ok: false, error: 'llm selection is required' };
  if (!isRecord(input)) return { ok: false, error: 'metadata must be an object' };
  const llm = input['llm'];
  if (llm === undefined || llm === null) return { ok: false, error: 'llm selection is required' };
  if (!isRecord(llm)) return { ok: false, error: 'llm must be an object' };
  const provider = llm['provider'];
  if (typeof provider !== 'string' || !LLM_PROVIDERS.includes(provider as LlmProvider)) {
    return { ok: false, error: 'llm.provider is invalid' };
  }
  const model = llm['model'];
  if (typeof model !== 'string') return { ok: false, error: 'llm.model must be a string' };
  const trimmedModel = model.trim();
  if (trimmedModel === '' || codePointLength(trimmedModel) > MAX_MODEL_CHARS || trimmedModel.includes('\u0000')) {
    return { ok: false, error: 'llm.model is invalid' };
  }
  const rawSkills = input['mentioned_skills'];
  const rawConnectors = input['selected_mcp_connectors'];
  const rawCount =
    (Array.isArray(rawSkills) ? rawSkills.length : 0) + (Array.isArray(rawConnectors) ? rawConnectors.length : 0);
  if (rawCount > MAX_SELECTIONS) {
    return { ok: false, error: `at most ${MAX_SELECTIONS} Skill/MCP selections are allowed` };
  }
  const skills = sanitizeRows('mentioned_skills', 'name', SKILL_NAME_PATTERN, rawSkills);
  if (!skills.ok) return skills;
  const connectors = sanitizeRows('selected_mcp_connectors', 'server', MCP_SERVER_NAME_PATTERN, rawConnectors);
  if (!connectors.ok) return connectors;
  const metadata: MessageMetadata = { llm: { provider: provider as LlmProvider, model: trimmedModel } };
  if (skills.rows.length > 0) metadata.mentioned_skills = skills.rows as SkillReceipt[];
  if (connectors.rows.length > 0) metadata.selected_mcp_connectors = connectors.rows as McpConnectorReceipt[];
  return { ok: true, metadata };
}

/**
 * Re-sanitises persisted selection receipts of a user history row (openspec sessions): when any row is invalid (or
 * there are more than 8 in total) both lists are dropped.
 */
export function sanitizePersistedReceipts(record: {
  mentioned_skills?: unknown;
  selected_mcp_connectors?: unknown;
}): { mentioned_skills?: SkillReceipt[]; selected_mcp_connectors?: McpConnectorReceipt[] } {
  const rawSkills = record.mentioned_skills;
  const rawConnectors = record.selected_mcp_connectors;
  if (rawSkills === undefined && rawConnectors === undefined) return {};
  const count =
    (Array.isArray(rawSkills) ? rawSkills.length : 0) + (Array.isArray(rawConnectors) ? rawConnectors.length : 0);
  if (count > MAX_SELECTIONS) return {};
  const skills = sanitizeRows('mentioned_skills', 'name', SKILL_NAME_PATTERN, rawSkills);
  const connectors = sanitizeRows('selected_mcp_connectors', 'server', MCP_SERVER_NAME_PATTERN, rawConnectors);
  if (!skills.ok || !connectors.ok) return {};
  const out: { mentioned_skills?: SkillReceipt[]; selected_mcp_connectors?: McpConnectorReceipt[] } = {};
  if (skills.rows.length > 0) out.mentioned_skills = skills.rows as SkillReceipt[];
  if (connectors.rows.length > 0) out.selected_mcp_connectors = connectors.rows as McpConnectorReceipt[];
  return out;
}
