import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext, ToolResult } from '../agent-tool';
import { WebSearchTool, type WebSearchOptions } from './web-search.tool';

const ctx = (): ToolContext => ({ chatId: 'c1', turnId: 't1', signal: new AbortController().signal });
const text = (result: ToolResult | string): string => (typeof result === 'string' ? result : result.model);

interface Stub {
  url: string;
  requests: URL[];
  close(): Promise<void>;
}

async function stub(handler: (url: URL, res: http.ServerResponse) => void): Promise<Stub> {
  const requests: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    requests.push(url);
    handler(url, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json = (res: http.ServerResponse, body: unknown, type = 'application/json') => {
  res.writeHead(200, { 'Content-Type': type });
  res.end(JSON.stringify(body));
};

describe(WebSearchTool.name, () => {
  let server: Stub | undefined;
  const tool = (options: Partial<WebSearchOptions>) =>
    new WebSearchTool({ duckDuckGoUrl: `${server?.url}/`, searxngUrl: null, timeoutMs: 2000, ...options });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('Scenario: DuckDuckGo abstract and related topics (nested groups flattened) are listed', async () => {
    server = await stub((_url, res) =>
      json(
        res,
        {
          AbstractText: 'TypeScript is a language.',
          AbstractSource: 'Wikipedia',
          AbstractURL: 'https://en.wikipedia.org/wiki/TypeScript',
          RelatedTopics: [
            { Text: 'JavaScript - a language', FirstURL: 'https://duckduckgo.com/JavaScript' },
            { Name: 'Tools', Topics: [{ Text: 'tsc - the compiler', FirstURL: 'https://duckduckgo.com/tsc' }] },
          ],
        },
        'application/x-javascript',
      ),
    );
    expect(await tool({}).execute({ query: 'typescript lang' }, ctx())).toBe(
      [
        'Search: typescript lang',
        '**Summary** (Wikipedia): TypeScript is a language.',
        'Source: https://en.wikipedia.org/wiki/TypeScript',
        '',
        '- JavaScript - a language',
        '  https://duckduckgo.com/JavaScript',
        '- tsc - the compiler',
        '  https://duckduckgo.com/tsc',
      ].join('\n'),
    );
    const request = server.requests[0] as URL;
    expect(Object.fromEntries(request.searchParams)).toEqual({
      q: 'typescript lang',
      format: 'json',
      no_redirect: '1',
      no_html: '1',
    });
    expect(tool({}).readOnly).toBe(true);
  });

  it('Scenario: at most 10 related topics are listed', async () => {
    const topics = Array.from({ length: 15 }, (_, i) => ({ Text: `topic ${i}`, FirstURL: `https://x.test/${i}` }));
    server = await stub((_url, res) => json(res, { RelatedTopics: topics }));
    const out = text(await tool({}).execute({ query: 'q' }, ctx()));
    expect(out.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(10);
  });

  it('Scenario: nothing found suggests web_fetch on the DuckDuckGo results page', async () => {
    server = await stub((_url, res) => json(res, { AbstractText: '', RelatedTopics: [] }));
    expect(await tool({}).execute({ query: 'rare words' }, ctx())).toBe(
      'Search: rare words\nNo instant answer found. To see full search results, call web_fetch with https://duckduckgo.com/?q=rare+words',
    );
  });

  it('Scenario: SearXNG is used when configured', async () => {
    server = await stub((url, res) =>
      url.pathname === '/searx/search'
        ? json(res, {
            answers: ['42'],
            results: [{ title: 'Result one', url: 'https://one.test/', content: 'first   snippet' }],
          })
        : json(res, {}),
    );
    const out = await tool({ searxngUrl: `${server.url}/searx` }).execute({ query: 'meaning' }, ctx());
    expect(out).toBe('Search: meaning\n**Answer**: 42\n\n- Result one\n  https://one.test/\n  first snippet');
    expect(server.requests[0]?.searchParams.get('format')).toBe('json');
  });

  it('Scenario: an unreachable service is a tool error, not an exception', async () => {
    server = await stub((_url, res) => json(res, {}));
    const deadUrl = server.url;
    await server.close();
    server = undefined;
    const out = await new WebSearchTool({ duckDuckGoUrl: `${deadUrl}/`, searxngUrl: null, timeoutMs: 2000 }).execute({ query: 'x' }, ctx());
    expect(out).toEqual({ model: 'Error: search failed: the search service is unreachable (ECONNREFUSED)', ok: false });
  });

  it('Scenario: HTTP errors, bad JSON and timeouts are tool errors', async () => {
    server = await stub((url, res) => {
      if (url.searchParams.get('q') === 'status') {
        res.writeHead(503);
        res.end();
      } else if (url.searchParams.get('q') === 'garbage') {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>rate limited</html>');
      }
      // 'slow': never answers
    });
    const search = tool({ timeoutMs: 300 });
    expect(text(await search.execute({ query: 'status' }, ctx()))).toBe('Error: search failed: the search service answered HTTP 503');
    expect(text(await search.execute({ query: 'garbage' }, ctx()))).toBe('Error: search failed: the search service did not return JSON');
    expect(text(await search.execute({ query: 'slow' }, ctx()))).toBe('Error: search failed: timed out (0.3s)');
  });
});
