import {
  MCP_ENV_NAME_PATTERN,
  MCP_HEADER_NAME_PATTERN,
  MCP_MASKED_VALUE,
  MCP_MAX_HEADERS,
  MCP_SERVER_NAME_PATTERN,
  type CreateMcpServerRequest,
  type McpServerRecord,
  type McpUserTransportType,
  type UpdateMcpServerRequest,
} from '@cashcode/contracts';

import { ApiError } from '../core/api/api-error';
import type { MessageKey } from '../core/i18n/i18n';

/** One editable header row; `masked` while it still shows the stored secret as `********`. */
export interface HeaderRow {
  id: number;
  name: string;
  value: string;
  masked: boolean;
}

export interface McpServerDraft {
  mode: 'create' | 'edit';
  name: string;
  displayName: string;
  type: McpUserTransportType;
  url: string;
  description: string;
  headers: HeaderRow[];
  /** stdio: the program, its arguments (one per line), environment rows (values are secrets) and working directory */
  command: string;
  args: string;
  env: HeaderRow[];
  cwd: string;
}

export type DraftField = 'name' | 'displayName' | 'type' | 'url' | 'description' | 'headers' | 'command' | 'args' | 'env' | 'cwd';

export interface DraftErrors {
  fields: Partial<Record<DraftField, MessageKey>>;
  /** by row id (header rows and env rows) */
  headers: Record<number, { name?: MessageKey; value?: MessageKey }>;
}

export interface ServerErrors {
  fields: Partial<Record<DraftField, string>>;
  /** by row id (header rows and env rows) */
  headers: Record<number, string>;
  /** a message that belongs to no field */
  general: string | null;
}

let nextRowId = 1;

export function newHeaderRow(name = '', value = '', masked = false): HeaderRow {
  return { id: nextRowId++, name, value, masked };
}

function codePoints(text: string): number {
  return Array.from(text).length;
}

/** The form for a new server, or for editing a user server (header values masked). */
export function draftFromRecord(record: McpServerRecord | null): McpServerDraft {
  if (!record) {
    return {
      mode: 'create',
      name: '',
      displayName: '',
      type: 'sse',
      url: '',
      description: '',
      headers: [],
      command: '',
      args: '',
      env: [],
      cwd: '',
    };
  }
  return {
    mode: 'edit',
    name: record.name,
    displayName: record.display_name,
    type: record.type,
    url: record.url,
    description: record.description,
    headers: Object.keys(record.headers).map((name) => newHeaderRow(name, MCP_MASKED_VALUE, true)),
    command: record.command ?? '',
    args: (record.args ?? []).join('\n'),
    env: Object.keys(record.env ?? {}).map((name) => newHeaderRow(name, MCP_MASKED_VALUE, true)),
    cwd: record.cwd ?? '',
  };
}

/** Renaming a header whose value is still the masked secret clears the value (it belonged to the old name). */
export function renameHeader(row: HeaderRow, name: string): HeaderRow {
  if (row.masked) return { ...row, name, value: '', masked: false };
  return { ...row, name };
}

export function changeHeaderValue(row: HeaderRow, value: string): HeaderRow {
  return { ...row, value, masked: row.masked && value === MCP_MASKED_VALUE };
}

/** URL problem of the spec's rule 5, or null. */
export function urlError(raw: string): MessageKey | null {
  const url = raw.trim();
  if (url === '' || codePoints(url) > 2048) return 'mcp.error.urlLength';
  const match = /^https?:\/\/([^/?#]*)/i.exec(url);
  let parsed: URL | null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!match || !parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.hostname === '') return 'mcp.error.url';
  if (match[1]!.includes('@')) return 'mcp.error.urlCredentials';
  return null;
}

/** Client-side validation mirroring the server (openspec mcp, console). */
export function validateDraft(draft: McpServerDraft): DraftErrors {
  const errors: DraftErrors = { fields: {}, headers: {} };
  if (draft.mode === 'create' && !MCP_SERVER_NAME_PATTERN.test(draft.name.trim())) errors.fields.name = 'mcp.error.name';
  const display = draft.displayName.trim();
  // an empty display title defaults to the name; only spaces or more than 100 characters are refused
  if ((display === '' && draft.displayName !== '') || codePoints(display) > 100) errors.fields.displayName = 'mcp.error.displayName';
  if (codePoints(draft.description.trim()) > 1000) errors.fields.description = 'mcp.error.description';
  if (draft.type === 'stdio') {
    if (draft.command.trim() === '') errors.fields.command = 'mcp.error.command';
    const seenEnv = new Set<string>();
    for (const row of draft.env) {
      const rowErrors: { name?: MessageKey; value?: MessageKey } = {};
      const name = row.name.trim();
      if (!MCP_ENV_NAME_PATTERN.test(name)) rowErrors.name = 'mcp.error.envName';
      else if (seenEnv.has(name)) rowErrors.name = 'mcp.error.envDuplicate';
      seenEnv.add(name);
      if (!row.masked && row.value === '') rowErrors.value = 'mcp.error.envValue';
      if (rowErrors.name || rowErrors.value) errors.headers[row.id] = rowErrors;
    }
    return errors;
  }
  const url = urlError(draft.url);
  if (url) errors.fields.url = url;
  if (draft.headers.length > MCP_MAX_HEADERS) errors.fields.headers = 'mcp.error.headerCount';
  const seen = new Set<string>();
  for (const row of draft.headers) {
    const rowErrors: { name?: MessageKey; value?: MessageKey } = {};
    const name = row.name.trim();
    if (!MCP_HEADER_NAME_PATTERN.test(name)) rowErrors.name = 'mcp.error.headerName';
    else if (seen.has(name.toLowerCase())) rowErrors.name = 'mcp.error.headerDuplicate';
    seen.add(name.toLowerCase());
    const length = codePoints(row.value);
    if (!row.masked && (length < 1 || length > 4096 || /[\r\n]/.test(row.value))) rowErrors.value = 'mcp.error.headerValue';
    if (rowErrors.name || rowErrors.value) errors.headers[row.id] = rowErrors;
  }
  return errors;
}

export function hasErrors(errors: DraftErrors): boolean {
  return Object.keys(errors.fields).length > 0 || Object.keys(errors.headers).length > 0;
}

/** The request body: `********` is sent back unchanged for headers whose stored value is kept. */
export function buildRequest(draft: McpServerDraft): CreateMcpServerRequest | UpdateMcpServerRequest {
  if (draft.type === 'stdio') {
    const env: Record<string, string> = {};
    for (const row of draft.env) env[row.name.trim()] = row.masked ? MCP_MASKED_VALUE : row.value;
    const body: UpdateMcpServerRequest = {
      type: 'stdio',
      display_name: draft.displayName.trim() || draft.name.trim(),
      description: draft.description.trim(),
      command: draft.command.trim(),
      args: draft.args.split('\n').map((line) => line.trim()).filter((line) => line !== ''),
      env,
    };
    if (draft.cwd.trim() !== '') body.cwd = draft.cwd.trim();
    return draft.mode === 'create' ? { name: draft.name.trim(), ...body } : body;
  }
  const headers: Record<string, string> = {};
  for (const row of draft.headers) headers[row.name.trim()] = row.masked ? MCP_MASKED_VALUE : row.value;
  const body: UpdateMcpServerRequest = {
    type: draft.type,
    display_name: draft.displayName.trim() || draft.name.trim(),
    description: draft.description.trim(),
    url: draft.url.trim(),
    headers,
  };
  return draft.mode === 'create' ? { name: draft.name.trim(), ...body } : body;
}

const API_FIELDS: Record<string, DraftField> = {
  name: 'name',
  type: 'type',
  display_name: 'displayName',
  description: 'description',
  url: 'url',
  headers: 'headers',
  command: 'command',
  args: 'args',
  env: 'env',
  cwd: 'cwd',
};

/** Puts the API's validation messages at their fields (a header's at its row); anything else is general. */
export function mapServerError(error: unknown, draft: McpServerDraft): ServerErrors {
  const out: ServerErrors = { fields: {}, headers: {}, general: null };
  if (!(error instanceof ApiError)) {
    out.general = error instanceof Error ? error.message : String(error);
    return out;
  }
  if (error.status === 409 && draft.mode === 'create') {
    // the name is taken
    out.fields.name = error.detail;
    return out;
  }
  let placed = false;
  for (const { field, message } of error.fieldErrors) {
    if (field.startsWith('headers.')) {
      const name = field.slice('headers.'.length).trim().toLowerCase();
      const row = draft.headers.find((r) => r.name.trim().toLowerCase() === name);
      if (row) {
        out.headers[row.id] = message;
        placed = true;
        continue;
      }
    }
    if (field.startsWith('env.')) {
      const name = field.slice('env.'.length);
      const row = draft.env.find((r) => r.name.trim() === name);
      if (row) {
        out.headers[row.id] = message;
        placed = true;
        continue;
      }
    }
    const mapped =
      API_FIELDS[field] ??
      (field.startsWith('headers') ? 'headers' : field.startsWith('env') ? 'env' : field.startsWith('args') ? 'args' : undefined);
    if (mapped) {
      out.fields[mapped] = message;
      placed = true;
    }
  }
  if (!placed) out.general = error.detail;
  return out;
}
