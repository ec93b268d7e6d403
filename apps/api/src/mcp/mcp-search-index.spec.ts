import type { McpServerConfig } from './mcp.types';
import { McpSearchIndex, type ServerSearchSource } from './mcp-search-index';

function config(name: string, displayName: string, description = ''): McpServerConfig {
  return { name, displayName, description, type: 'sse', builtin: false, command: '', args: [], env: {}, cwd: '/', url: 'http://a.b/sse', headers: {} };
}
const tool = (name: string, description = '') => ({ name, description, inputSchema: {} });

describe(McpSearchIndex.name, () => {
  it('Scenario: live tools win over cached ones; servers with neither are stubs', () => {
    const index = new McpSearchIndex();
    const sources: ServerSearchSource[] = [
      {
        config: config('weather', 'Weather', 'Forecasts'),
        live: [{ tool: tool('getForecast', 'Daily forecast'), wrapper: 'mcp_weather_getForecast' }],
        liveVersion: 1,
        cached: [tool('getForecast', 'old'), tool('getAlerts', 'Severe weather alerts')],
        cacheVersion: 1,
      },
      { config: config('mail', 'Mail', 'Send mail'), live: null, liveVersion: 0, cached: null, cacheVersion: 0 },
    ];
    index.sync(sources);
    expect(index.size).toBe(3);
    const hits = index.search('forecast', 10).map((h) => [h.doc.kind, h.doc.original || h.doc.server]);
    expect(hits).toEqual([['live', 'getForecast']]);
    expect(index.search('alerts', 10).map((h) => h.doc.kind)).toEqual(['cached']);
    expect(index.search('mail', 10).map((h) => [h.doc.kind, h.doc.server])).toEqual([['stub', 'mail']]);
    // camel-split names are searchable
    expect(index.search('get', 10)).toHaveLength(2);
  });

  it('Scenario: the index changes only for servers whose sources changed, and drops removed servers', () => {
    const index = new McpSearchIndex();
    const a: ServerSearchSource = { config: config('a', 'Alpha'), live: null, liveVersion: 0, cached: [tool('one')], cacheVersion: 1 };
    const b: ServerSearchSource = { config: config('b', 'Beta'), live: null, liveVersion: 0, cached: [tool('two')], cacheVersion: 1 };
    index.sync([a, b]);
    expect(index.search('two', 5)).toHaveLength(1);
    index.sync([a, { ...b, cached: [tool('three')], cacheVersion: 2 }]);
    expect(index.search('two', 5)).toHaveLength(0);
    expect(index.search('three', 5)).toHaveLength(1);
    index.sync([a]);
    expect(index.search('three', 5)).toHaveLength(0);
    expect(index.size).toBe(1);
  });
});
