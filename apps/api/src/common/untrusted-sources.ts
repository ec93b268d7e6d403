/**
 * Which tool results are untrusted content, and how each is named (openspec memory "Requirement: Memory provenance"):
 * a fetched page by its URL, search results by the query, an MCP tool by `<server>/<tool>`, an MCP resource by server
 * and URI, a Skill's resource file by `<skill>/<path>`. Shared by the agent loop (agent/untrusted-context.ts) and Dream.
 */
import * as path from 'node:path';
import { isRecord, type AttachmentReceipt, type UntrustedSource } from '@cashcode/contracts';
import type { ChatMessage } from './chat-message';

/** The top folder of the workspace that holds the files uploaded to chats (`attachments/<chat_id>/<name>`). */
export const ATTACHMENTS_FOLDER = 'attachments';
/** The top folder of the workspace where the browser saves what a page downloads (agent/browser/browser-downloads.ts). */
export const BROWSER_DOWNLOADS_FOLDER = 'downloads';

/**
 * The untrusted kind of a workspace file read back, by its path: someone else's upload (`attachments/…`) or what a
 * page downloaded (`downloads/…`). The path is taken as the workspace tools take it — `./x/../attachments/f` is
 * `attachments/f` — and an absolute path counts when one of its folders is one of those (the workspace root is not
 * known here: marking too much only means asking the owner before a memory write).
 */
function workspaceFileSource(given: string): UntrustedSource | null {
  if (given === '') return null;
  const normalized = path.posix.normalize(given.replace(/\\/g, '/'));
  const kindOf = (folder: string) => (folder === ATTACHMENTS_FOLDER ? 'attachment' : folder === BROWSER_DOWNLOADS_FOLDER ? 'browser' : null);
  if (path.posix.isAbsolute(normalized)) {
    for (const folder of normalized.split('/')) {
      const kind = kindOf(folder);
      if (kind) return { kind, name: clip(given) };
    }
    return null;
  }
  const kind = kindOf(normalized.split('/')[0] ?? '');
  return kind ? { kind, name: clip(normalized) } : null;
}

/** longest source name kept (a URL or query may be long) */
export const MAX_SOURCE_NAME_CHARS = 300;

function argument(rawArguments: string, key: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawArguments);
  } catch {
    return '';
  }
  const value = isRecord(parsed) ? parsed[key] : undefined;
  return typeof value === 'string' ? value.trim() : '';
}

function clip(text: string): string {
  return text.length <= MAX_SOURCE_NAME_CHARS ? text : `${text.slice(0, MAX_SOURCE_NAME_CHARS - 1)}…`;
}

/** Tools whose results may carry someone else's content (besides every MCP tool): what makes a child's answer untrusted. */
const READS_UNTRUSTED: ReadonlySet<string> = new Set([
  'web_fetch',
  'web_search',
  'browser',
  'read_file',
  'mcp_read_resource',
  'skill_read_resource',
  'delegate',
]);

/**
 * A `delegate` call's answer: untrusted when its child could read untrusted content — it was given all its parent's
 * tools (no `tools` list) or one that reads others' content. Judged from the arguments alone, like every other call
 * here, so a later turn's history and Dream count it even though only the answer is kept (during its own turn the
 * child's actual sources travel with the result).
 */
function delegateSource(rawArguments: string): UntrustedSource | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawArguments);
  } catch {
    parsed = null;
  }
  const tools = isRecord(parsed) ? parsed['tools'] : undefined;
  const given = Array.isArray(tools) && tools.every((tool) => typeof tool === 'string') ? (tools as string[]) : null;
  const reads = given === null || given.some((tool) => READS_UNTRUSTED.has(tool.trim()) || tool.trim().startsWith('mcp_'));
  return reads ? { kind: 'subagent', name: clip(argument(rawArguments, 'task') || 'a sub-agent') } : null;
}

/**
 * The untrusted source a call of the tool `name` reads, or null for a tool whose result is the server's own (files of
 * the workspace, memory, the session index). `mcp`: the MCP server tool behind a wrapper; without it (a tool of an
 * earlier turn no longer registered, a history record) an `mcp_…` wrapper name still counts as an MCP tool.
 */
export function untrustedSourceOf(
  name: string,
  rawArguments: string,
  mcp?: { server: string; tool: string },
): UntrustedSource | null {
  if (mcp) return { kind: 'mcp_tool', name: clip(`${mcp.server}/${mcp.tool}`) };
  switch (name) {
    case 'web_fetch':
      return { kind: 'web_fetch', name: clip(argument(rawArguments, 'url') || 'a web page') };
    case 'web_search':
      return { kind: 'web_search', name: clip(argument(rawArguments, 'query') || 'a web search') };
    case 'browser':
      return { kind: 'browser', name: clip(argument(rawArguments, 'url') || 'a browser page') };
    case 'mcp_read_resource':
      return { kind: 'mcp_resource', name: clip(`${argument(rawArguments, 'server_name')} ${argument(rawArguments, 'uri')}`.trim()) };
    case 'read_file':
    case 'grep':
      // a file uploaded to a chat is someone else's content, whoever attached it; so is a page's download (grep
      // searches them only when its path points into them)
      return workspaceFileSource(argument(rawArguments, 'path'));
    case 'delegate':
      return delegateSource(rawArguments);
    case 'skill_read_resource':
      return { kind: 'skill_resource', name: clip(`${argument(rawArguments, 'name')}/${argument(rawArguments, 'path')}`) };
    default:
      if (name.startsWith('mcp_') && !['mcp_prepare', 'mcp_list_resources'].includes(name)) {
        return { kind: 'mcp_tool', name: clip(name) };
      }
      return null;
  }
}

/** The attachments of a user message as untrusted sources, named by their workspace path. */
export function attachmentSources(attachments: readonly AttachmentReceipt[] | undefined): UntrustedSource[] {
  return (attachments ?? []).map((attachment) => ({ kind: 'attachment', name: clip(attachment.path) }));
}

/** Sources without repeats (same kind and name), in first-seen order. */
export function uniqueSources(sources: Iterable<UntrustedSource>): UntrustedSource[] {
  const out: UntrustedSource[] = [];
  for (const source of sources) {
    if (!out.some((known) => known.kind === source.kind && known.name === source.name)) out.push({ kind: source.kind, name: source.name });
  }
  return out;
}

/**
 * The untrusted sources of a conversation: the marks its messages carry (a summary of untrusted content, a message's
 * attachments, a channel sender) and its tool results from untrusted sources. `mcpOf`: the MCP tool behind a
 * registered wrapper name, when known.
 */
export function untrustedSourcesOfMessages(
  messages: readonly ChatMessage[],
  mcpOf: (name: string) => { server: string; tool: string } | undefined = () => undefined,
): UntrustedSource[] {
  const found: UntrustedSource[] = [];
  const argumentsById = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'user' || message.role === 'assistant') found.push(...(message.untrusted_sources ?? []));
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) argumentsById.set(call.id, call.function.arguments);
    } else if (message.role === 'tool') {
      const source = untrustedSourceOf(message.name, argumentsById.get(message.tool_call_id) ?? '{}', mcpOf(message.name));
      if (source) found.push(source);
    }
  }
  return uniqueSources(found);
}
