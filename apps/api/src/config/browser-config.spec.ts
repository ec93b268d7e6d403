import { ConfigError } from './env-values';
import { loadBrowserConfig } from './browser-config';

describe('browser settings', () => {
  it('defaults: offered when Chromium is found, 5 minutes idle, 10 tabs, 10 MiB per response', () => {
    expect(loadBrowserConfig({})).toEqual({
      enabled: null,
      executable: '/usr/bin/chromium',
      idleMs: 300_000,
      timeoutMs: 15_000,
      maxTabs: 10,
      maxResponseBytes: 10 * 1024 * 1024,
      snapshotMaxChars: 20_000,
      allowedDomains: [],
    });
  });

  it('reads the switch and the allowed domains', () => {
    const config = loadBrowserConfig({ CASHCODE_BROWSER_ENABLED: 'false', CASHCODE_BROWSER_ALLOWED_DOMAINS: 'Example.com, *.wiki.org' });
    expect(config.enabled).toBe(false);
    expect(config.allowedDomains).toEqual(['example.com', 'wiki.org']);
  });

  it('Scenario: the settings of the browser are validated at boot', () => {
    expect(() => loadBrowserConfig({ CASHCODE_BROWSER_ENABLED: 'maybe' })).toThrow(ConfigError);
    expect(() => loadBrowserConfig({ CASHCODE_BROWSER_ALLOWED_DOMAINS: 'http://x.org' })).toThrow(ConfigError);
    expect(() => loadBrowserConfig({ CASHCODE_BROWSER_MAX_TABS: '0' })).toThrow(ConfigError);
  });
});
