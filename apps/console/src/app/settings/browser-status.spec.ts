import { browserLine } from './browser-status';

describe('the browser line of Settings', () => {
  it('Scenario: Tools & approvals says whether the browser tool is offered and how Chromium is confined', () => {
    expect(browserLine(undefined)).toBeNull();
    expect(browserLine({ enabled: true, executable: '/usr/bin/chromium', sandboxed: true, allow_private: false })).toEqual({
      key: 'toolPolicies.browser.sandboxed',
      params: { executable: '/usr/bin/chromium' },
      enabled: true,
    });
    expect(browserLine({ enabled: true, executable: '/usr/bin/chromium', sandboxed: false, allow_private: false })?.key).toBe('toolPolicies.browser.unconfined');
    expect(browserLine({ enabled: false, sandboxed: false, allow_private: false, reason: 'CASHCODE_BROWSER_ENABLED=false' })).toEqual({
      key: 'toolPolicies.browser.off',
      params: { reason: 'CASHCODE_BROWSER_ENABLED=false' },
      enabled: false,
    });
  });
});
