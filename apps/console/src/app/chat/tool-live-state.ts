/**
 * What a running tool call shows besides its status: the server's progress (`tool_progress`) and an MCP elicitation
 * form (`elicitation_request` / `elicitation_resolved`), folded into the call's block by pure rules (openspec console
 * "Requirement: Tool progress and elicitation cards").
 */
import type { ElicitationAction, ElicitationRequestEvent, ElicitationValue } from '@cashcode/contracts';

export interface ToolProgressState {
  progress: number;
  total?: number;
  message?: string;
}

/** `open`: waiting for the user; `sent`: the answer is on its way; otherwise the final action. */
export type ElicitationStatus = 'open' | 'sent' | ElicitationAction;

export interface ElicitationField {
  name: string;
  label: string;
  description: string;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'select' | 'multiselect';
  required: boolean;
  options: Array<{ value: string; label: string }>;
  default?: ElicitationValue;
}

export interface ElicitationCardState {
  id: string;
  server: string;
  message: string;
  fields: ElicitationField[];
  status: ElicitationStatus;
}

/** Progress as a percentage (0–100) when the total is known, else null. */
export function progressPercent(progress: ToolProgressState): number | null {
  if (progress.total === undefined || !(progress.total > 0)) return null;
  return Math.max(0, Math.min(100, Math.round((progress.progress / progress.total) * 100)));
}

function options(schema: Record<string, unknown>): Array<{ value: string; label: string }> | null {
  if (Array.isArray(schema['enum'])) {
    const names = Array.isArray(schema['enumNames']) ? (schema['enumNames'] as unknown[]) : [];
    return (schema['enum'] as unknown[]).map((value, i) => ({ value: String(value), label: String(names[i] ?? value) }));
  }
  const list = Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : null;
  if (!list) return null;
  return (list as Array<{ const?: unknown; title?: unknown }>).map((o) => ({
    value: String(o.const),
    label: typeof o.title === 'string' ? o.title : String(o.const),
  }));
}

/** The form fields of a requested schema (flat properties in declaration order). */
export function elicitationFields(schema: Record<string, unknown>): ElicitationField[] {
  const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  return Object.entries(properties).map(([name, property]) => {
    const type = property['type'];
    const itemOptions = type === 'array' ? options((property['items'] ?? {}) as Record<string, unknown>) : null;
    const ownOptions = options(property);
    const kind: ElicitationField['kind'] =
      type === 'boolean'
        ? 'boolean'
        : type === 'integer'
          ? 'integer'
          : type === 'number'
            ? 'number'
            : type === 'array'
              ? 'multiselect'
              : ownOptions
                ? 'select'
                : 'text';
    const field: ElicitationField = {
      name,
      label: typeof property['title'] === 'string' ? property['title'] : name,
      description: typeof property['description'] === 'string' ? property['description'] : '',
      kind,
      required: required.has(name),
      options: itemOptions ?? ownOptions ?? [],
    };
    const fallback = property['default'];
    if (typeof fallback === 'string' || typeof fallback === 'number' || typeof fallback === 'boolean' || Array.isArray(fallback)) {
      field.default = fallback as ElicitationValue;
    }
    return field;
  });
}

export function elicitationCard(event: ElicitationRequestEvent): ElicitationCardState {
  return {
    id: event.elicitation_id,
    server: event.server,
    message: event.message,
    fields: elicitationFields(event.requested_schema ?? {}),
    status: 'open',
  };
}

/**
 * The content to accept with, from the form's raw values: empty optional fields are left out, numbers parsed.
 * Returns the first missing required field's name as an error instead.
 */
export function elicitationContent(
  fields: readonly ElicitationField[],
  raw: Record<string, unknown>,
): { ok: true; content: Record<string, ElicitationValue> } | { ok: false; missing: string } {
  const content: Record<string, ElicitationValue> = {};
  for (const field of fields) {
    const value = raw[field.name];
    if (field.kind === 'boolean') {
      if (typeof value === 'boolean') content[field.name] = value;
      else if (field.required) content[field.name] = false;
      continue;
    }
    if (field.kind === 'multiselect') {
      if (Array.isArray(value) && value.length > 0) content[field.name] = value.map(String);
      else if (field.required) return { ok: false, missing: field.label };
      continue;
    }
    const text = value === undefined || value === null ? '' : String(value).trim();
    if (text === '') {
      if (field.required) return { ok: false, missing: field.label };
      continue;
    }
    content[field.name] = field.kind === 'number' || field.kind === 'integer' ? Number(text) : text;
  }
  return { ok: true, content };
}
