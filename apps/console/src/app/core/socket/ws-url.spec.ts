import { withToken, wsUrlFromConfig, wsUrlOverride } from './ws-url';

const page = (href: string) => {
  const url = new URL(href);
  return { protocol: url.protocol, hostname: url.hostname, host: url.host, port: url.port, search: url.search };
};

describe('ws-url', () => {
  it('Scenario: an explicit override wins (global, then ?ws=, then meta)', () => {
    const location = page('http://127.0.0.1:8000/?ws=ws://127.0.0.1:9001/');
    expect(wsUrlOverride(location, { wsUrl: 'ws://127.0.0.1:9000/' }, 'ws://meta/')).toBe('ws://127.0.0.1:9000/');
    expect(wsUrlOverride(location, undefined, 'ws://meta/')).toBe('ws://127.0.0.1:9001/');
    expect(wsUrlOverride(page('http://127.0.0.1:8000/'), undefined, 'ws://meta:1/')).toBe('ws://meta:1/');
  });

  it('ignores overrides that are not ws(s) URLs', () => {
    expect(wsUrlOverride(page('http://h/?ws=javascript:alert(1)'), { wsUrl: 'http://x/' }, 'nonsense')).toBeNull();
  });

  it('Scenario: the default gateway is port 8765 on the page host', () => {
    expect(wsUrlFromConfig(page('http://localhost:8000/settings'), null)).toBe('ws://localhost:8765/');
    expect(wsUrlFromConfig(page('https://box.lan:8000/'), null)).toBe('wss://box.lan:8765/');
  });

  it('Scenario: a gateway sharing the HTTP port is at /ws', () => {
    expect(wsUrlFromConfig(page('http://127.0.0.1:8000/'), { ws_port: 8000, ws_path: '/ws' })).toBe(
      'ws://127.0.0.1:8000/ws',
    );
    expect(wsUrlFromConfig(page('http://127.0.0.1:8765/'), null)).toBe('ws://127.0.0.1:8765/ws');
  });
});

describe('withToken', () => {
  it('adds the API token as a query parameter', () => {
    expect(withToken('ws://127.0.0.1:8765/', 's3cret')).toBe('ws://127.0.0.1:8765/?token=s3cret');
    expect(withToken('ws://127.0.0.1:8000/ws', null)).toBe('ws://127.0.0.1:8000/ws');
  });
});
