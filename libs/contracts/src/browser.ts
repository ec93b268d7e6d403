/**
 * The `browser` tool: a headless Chromium the agent drives (openspec browser). Shapes shared by the health endpoint,
 * the approval request of a browser action and the console.
 */

/** The browser tool's availability (`GET /api/health` → `browser`, additive). */
export interface BrowserStatus {
  /** true when the `browser` tool is offered to the model */
  enabled: boolean;
  /** the Chromium executable used (absent when none was found) */
  executable?: string;
  /** true when Chromium runs inside bubblewrap (no network of its own, the server's directories hidden) */
  sandboxed: boolean;
  /** page requests may reach private and loopback addresses (the owner's CASHCODE_FETCH_ALLOW_PRIVATE) */
  allow_private: boolean;
  /** why the tool is not offered (absent when enabled) */
  reason?: string;
}

/** Additive field `browser` of an `approval_request` with risk `browser_action`: what the click, typing or key does. */
export interface BrowserActionDetail {
  /** click, type, select or press */
  action: string;
  /** the element as the last snapshot named it (`button "Send"`), absent for a key press on the page */
  element?: string;
  /** the page the action happens on */
  url: string;
  /** why it asks: it submits a form, or the page is outside the allowed domains */
  reason: 'form_submit' | 'outside_allowed_domains';
  /** type/select: the text typed or the options chosen, exactly */
  text?: string;
}
