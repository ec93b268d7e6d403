import { isApiOrGatewayPath, lenientPath, matchesRoute, routePath } from './request-path';

describe('request paths', () => {
  it('Scenario: the routed path is the raw path of the request target', () => {
    expect(routePath({ url: '/api/settings/llm?x=1' })).toBe('/api/settings/llm');
    expect(routePath({ url: '/api/settings/%6Clm' })).toBe('/api/settings/%6Clm');
    expect(routePath({ url: '//api/x' })).toBe('//api/x');
    expect(routePath({ url: 'http://evil.example/ws?token=1' })).toBe('/ws');
    expect(routePath({ url: undefined })).toBe('/');
  });

  it('Scenario: a route matches exactly, case-sensitively, with one optional trailing slash', () => {
    expect(matchesRoute('/ws', '/ws')).toBe(true);
    expect(matchesRoute('/ws/', '/ws')).toBe(true);
    for (const path of ['/WS', '/ws//', '//ws', '/%77s', '/ws/x', '/wsx']) expect(matchesRoute(path, '/ws')).toBe(false);
  });

  it('Scenario: every spelling of /api and /ws is reserved, other paths are not', () => {
    for (const path of ['/api', '/API/settings/llm', '/Api/sessions', '//api/x', '/%61pi/settings', '/%2561pi/x', '/%2Fapi/x', '/WS', '/ws/', '/%E0%A4%A']) {
      expect(isApiOrGatewayPath(path)).toBe(true);
    }
    for (const path of ['/', '/main.js', '/chat/abc', '/apiary', '/wsx/y']) expect(isApiOrGatewayPath(path)).toBe(false);
    expect(lenientPath('/A//b/%43/')).toBe('/a/b/c');
  });

  it('Scenario: every spelling of /metrics is an API path', () => {
    for (const path of ['/metrics', '/metrics/', '/METRICS', '//metrics', '/%6Detrics', '/metrics/x']) {
      expect(isApiOrGatewayPath(path)).toBe(true);
    }
    for (const path of ['/metricsx', '/chat/metrics']) expect(isApiOrGatewayPath(path)).toBe(false);
  });
});
