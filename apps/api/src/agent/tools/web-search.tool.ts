/**
 * `web_search` (openspec builtin-tools): the DuckDuckGo Instant Answer API with the original server's parameters, or a
 * SearXNG instance (`<url>/search?q=…&format=json`) when CASHCODE_SEARXNG_URL is set. An unreachable service is a tool
 * error the model sees (`Error: search failed: …`); the turn continues. Both endpoints are configured by the server
 * owner, so they do not go through the SSRF guard (a SearXNG instance is usually on the local network).
 */
import { isRecord } from '@cashcode/contracts';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { formatSeconds, requireString, toolError } from './tool-args';
import { WEB_FETCH_USER_AGENT } from './web-fetch.tool';
import { trimTrailing } from '../../common/trim';

export const DUCKDUCKGO_API_URL = 'https://api.duckduckgo.com/';
export const WEB_SEARCH_MAX_RESULTS = 10;
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
const SNIPPET_CHARS = 300;

export interface WebSearchOptions {
  /** DuckDuckGo Instant Answer endpoint (tests point it at a local server) */
  duckDuckGoUrl: string;
  /** SearXNG base URL; when set it is used instead of DuckDuckGo */
  searxngUrl: string | null;
  timeoutMs: number;
}

class SearchFailure extends Error {}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

async function getJson(url: URL, timeoutMs: number, signal: AbortSignal): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { 'User-Agent': WEB_FETCH_USER_AGENT, Accept: 'application/json' },
      signal: AbortSignal.any([signal, timeout]),
      redirect: 'follow',
    });
  } catch (error) {
    signal.throwIfAborted();
    if (timeout.aborted) throw new SearchFailure(`timed out (${formatSeconds(timeoutMs)})`);
    // duck-typed: errors from undici may come from another realm (e.g. under Jest)
    const cause = isRecord(error) && isRecord(error['cause']) ? error['cause'] : error;
    const code = isRecord(cause) && typeof cause['code'] === 'string' ? ` (${cause['code']})` : '';
    throw new SearchFailure(`the search service is unreachable${code}`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new SearchFailure(`the search service answered HTTP ${response.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = response.body?.getReader();
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > MAX_RESPONSE_BYTES) {
          await reader.cancel();
          throw new SearchFailure('the search response is too large');
        }
        chunks.push(value);
      }
    }
  } catch (error) {
    signal.throwIfAborted();
    if (error instanceof SearchFailure) throw error;
    if (timeout.aborted) throw new SearchFailure(`timed out (${formatSeconds(timeoutMs)})`);
    throw new SearchFailure('the search response could not be read');
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new SearchFailure('the search service did not return JSON');
  }
}

/** Formats a DuckDuckGo Instant Answer response as the original server did (in English). */
export function formatDuckDuckGo(query: string, data: unknown): string {
  const lines = [`Search: ${query}`];
  const record = isRecord(data) ? data : {};
  const answer = text(record['Answer']);
  if (answer) lines.push(`**Answer**: ${answer}`);
  const abstract = text(record['AbstractText']) || text(record['Abstract']);
  if (abstract) {
    const source = text(record['AbstractSource']);
    lines.push(source ? `**Summary** (${source}): ${abstract}` : `**Summary**: ${abstract}`);
    const abstractUrl = text(record['AbstractURL']);
    if (abstractUrl) lines.push(`Source: ${abstractUrl}`);
  }
  const topics: Array<{ text: string; url: string }> = [];
  const collect = (items: unknown) => {
    if (!Array.isArray(items)) return;
    for (const item of items) {
      if (topics.length >= WEB_SEARCH_MAX_RESULTS) return;
      if (!isRecord(item)) continue;
      if (Array.isArray(item['Topics'])) {
        collect(item['Topics']);
        continue;
      }
      const topicText = text(item['Text']);
      if (topicText) topics.push({ text: topicText, url: text(item['FirstURL']) });
    }
  };
  collect(record['Results']);
  collect(record['RelatedTopics']);
  if (topics.length > 0) {
    lines.push('');
    for (const topic of topics) {
      lines.push(`- ${topic.text}`);
      if (topic.url) lines.push(`  ${topic.url}`);
    }
  }
  if (lines.length === 1) {
    const fallback = `https://duckduckgo.com/?q=${encodeURIComponent(query).replace(/%20/g, '+')}`;
    lines.push(`No instant answer found. To see full search results, call web_fetch with ${fallback}`);
  }
  return lines.join('\n');
}

/** Formats a SearXNG JSON response. */
export function formatSearxng(query: string, data: unknown): string {
  const lines = [`Search: ${query}`];
  const record = isRecord(data) ? data : {};
  const answers = Array.isArray(record['answers']) ? record['answers'] : [];
  for (const answer of answers.slice(0, 3)) {
    const value = typeof answer === 'string' ? answer.trim() : isRecord(answer) ? text(answer['answer']) : '';
    if (value) lines.push(`**Answer**: ${value}`);
  }
  const results = Array.isArray(record['results']) ? record['results'] : [];
  let shown = 0;
  for (const result of results) {
    if (shown >= WEB_SEARCH_MAX_RESULTS) break;
    if (!isRecord(result)) continue;
    const title = text(result['title']);
    const url = text(result['url']);
    if (!title && !url) continue;
    if (shown === 0) lines.push('');
    lines.push(`- ${title || url}`);
    if (url) lines.push(`  ${url}`);
    const snippet = text(result['content']);
    if (snippet) lines.push(`  ${clip(snippet.replace(/\s+/g, ' '), SNIPPET_CHARS)}`);
    shown += 1;
  }
  if (lines.length === 1) lines.push('No results found.');
  return lines.join('\n');
}

export class WebSearchTool implements AgentTool {
  readonly name = 'web_search';
  readonly description =
    'Search the web and return a short summary and up to 10 results with their URLs. ' +
    'Use web_fetch on a result URL to read it.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: { query: { type: 'string', description: 'The search query' } },
    required: ['query'],
  };
  readonly readOnly = true;

  constructor(private readonly options: WebSearchOptions) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const query = requireString(args, 'query').trim();
    if (query === '') return toolError('search failed: the query is empty');
    try {
      if (this.options.searxngUrl) {
        const url = new URL(`${trimTrailing(this.options.searxngUrl, '/')}/search`);
        url.searchParams.set('q', query);
        url.searchParams.set('format', 'json');
        return formatSearxng(query, await getJson(url, this.options.timeoutMs, ctx.signal));
      }
      const url = new URL(this.options.duckDuckGoUrl);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('no_redirect', '1');
      url.searchParams.set('no_html', '1');
      return formatDuckDuckGo(query, await getJson(url, this.options.timeoutMs, ctx.signal));
    } catch (error) {
      if (error instanceof SearchFailure) return toolError(`search failed: ${error.message}`);
      throw error;
    }
  }
}
