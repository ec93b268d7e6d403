import { MCP_MASKED_VALUE, type McpServerRecord } from '@cashcode/contracts';

import { ApiError } from '../core/api/api-error';
import {
  buildRequest,
  changeHeaderValue,
  draftFromRecord,
  hasErrors,
  mapServerError,
  newHeaderRow,
  renameHeader,
  validateDraft,
  type McpServerDraft,
} from './mcp-server-form';

const record: McpServerRecord = {
  name: 'weather',
  display_name: 'Weather',
  description: 'Forecasts',
  type: 'streamable_http',
  url: 'https://example.com/mcp',
  headers: { Authorization: MCP_MASKED_VALUE },
  builtin: false,
  mutable: true,
  status: 'disconnected',
  connected: false,
  status_error: null,
  tool_count: 0,
};

function draft(overrides: Partial<McpServerDraft> = {}): McpServerDraft {
  return { ...draftFromRecord(null), name: 'files', displayName: 'Files', url: 'http://127.0.0.1:8090/sse', ...overrides };
}

describe('MCP server form', () => {
  it('edits a user server with masked header values and sends them back unchanged', () => {
    const edit = draftFromRecord(record);
    expect(edit).toMatchObject({ mode: 'edit', name: 'weather', type: 'streamable_http', url: 'https://example.com/mcp' });
    expect(edit.headers.map((h) => [h.name, h.value, h.masked])).toEqual([['Authorization', MCP_MASKED_VALUE, true]]);
    expect(hasErrors(validateDraft(edit))).toBe(false);
    expect(buildRequest(edit)).toEqual({
      type: 'streamable_http',
      display_name: 'Weather',
      description: 'Forecasts',
      url: 'https://example.com/mcp',
      headers: { Authorization: MCP_MASKED_VALUE },
    });
  });

  it('clears a masked value when its header is renamed', () => {
    const row = newHeaderRow('Authorization', MCP_MASKED_VALUE, true);
    expect(renameHeader(row, 'X-Key')).toMatchObject({ name: 'X-Key', value: '', masked: false });
    expect(changeHeaderValue(row, 'new')).toMatchObject({ value: 'new', masked: false });
  });

  it('creates with a trimmed name and body', () => {
    expect(buildRequest(draft({ name: ' files ', description: ' d ', headers: [newHeaderRow(' X-Key ', 'v')] }))).toEqual({
      name: 'files',
      type: 'sse',
      display_name: 'Files',
      description: 'd',
      url: 'http://127.0.0.1:8090/sse',
      headers: { 'X-Key': 'v' },
    });
  });

  it('mirrors the server rules', () => {
    expect(validateDraft(draft({ name: 'Bad Name' })).fields.name).toBe('mcp.error.name');
    expect(validateDraft(draft({ displayName: ' ' })).fields.displayName).toBe('mcp.error.displayName');
    // empty: the name is the display title
    expect(validateDraft(draft({ displayName: '' })).fields.displayName).toBeUndefined();
    expect(buildRequest(draft({ displayName: '' }))).toMatchObject({ display_name: 'files' });
    expect(validateDraft(draft({ url: 'ftp://x' })).fields.url).toBe('mcp.error.url');
    expect(validateDraft(draft({ url: 'http://u:p@x.y' })).fields.url).toBe('mcp.error.urlCredentials');
    expect(validateDraft(draft({ url: '' })).fields.url).toBe('mcp.error.urlLength');
    expect(validateDraft(draft({ description: 'x'.repeat(1001) })).fields.description).toBe('mcp.error.description');
    const a = newHeaderRow('X-A', '1');
    const b = newHeaderRow('x-a', '2');
    const c = newHeaderRow('bad name', '3');
    const d = newHeaderRow('X-D', 'a\nb');
    const errors = validateDraft(draft({ headers: [a, b, c, d] }));
    expect(errors.headers[a.id]).toBeUndefined();
    expect(errors.headers[b.id]).toEqual({ name: 'mcp.error.headerDuplicate' });
    expect(errors.headers[c.id]).toEqual({ name: 'mcp.error.headerName' });
    expect(errors.headers[d.id]).toEqual({ value: 'mcp.error.headerValue' });
    // the name of an existing server cannot change, so it is not validated when editing
    expect(validateDraft({ ...draftFromRecord(record), name: 'X' }).fields.name).toBeUndefined();
  });

  it('builds a stdio request: args one per line, masked env values sent back, no url or headers', () => {
    const stdio = {
      ...draft({ type: 'stdio' as const, command: ' node ', args: 'server.js\n\n --flag \n', cwd: '' }),
      env: [newHeaderRow('TOKEN', 'secret'), newHeaderRow('KEPT', MCP_MASKED_VALUE, true)],
    };
    expect(hasErrors(validateDraft(stdio))).toBe(false);
    expect(buildRequest(stdio)).toEqual({
      name: 'files',
      type: 'stdio',
      display_name: 'Files',
      description: '',
      command: 'node',
      args: ['server.js', '--flag'],
      env: { TOKEN: 'secret', KEPT: MCP_MASKED_VALUE },
    });
    expect(validateDraft({ ...stdio, command: ' ' }).fields.command).toBe('mcp.error.command');
    expect(validateDraft({ ...stdio, env: [newHeaderRow('1X', 'v')] }).headers).not.toEqual({});
  });

  it('puts API validation messages at their fields and header rows', () => {
    const row = newHeaderRow('X-Key', MCP_MASKED_VALUE, true);
    const form = draft({ headers: [row] });
    const error = new ApiError(422, 'header uses a masked value', [
      { field: 'headers.X-Key', message: "header 'X-Key' uses a masked value without a stored secret" },
    ]);
    expect(mapServerError(error, form)).toEqual({
      fields: {},
      headers: { [row.id]: "header 'X-Key' uses a masked value without a stored secret" },
      general: null,
    });
    expect(mapServerError(new ApiError(409, 'MCP server already exists: files'), form)).toEqual({
      fields: { name: 'MCP server already exists: files' },
      headers: {},
      general: null,
    });
    expect(mapServerError(new ApiError(400, 'unable to save the MCP catalog'), form).general).toBe('unable to save the MCP catalog');
    expect(mapServerError(new ApiError(422, 'url bad', [{ field: 'url', message: 'url bad' }]), form).fields).toEqual({ url: 'url bad' });
  });
});
