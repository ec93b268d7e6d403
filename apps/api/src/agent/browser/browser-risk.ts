/**
 * Which browser actions ask the owner (openspec browser "Requirement: Actions that ask the owner"): reading and
 * navigating never do; a click on a form's button, typing with `submit`, Enter in a form field, and any click, typing,
 * selection or key press on a page outside CASHCODE_BROWSER_ALLOWED_DOMAINS (when set) do — risk `browser_action`.
 * Judged twice: before the call from what the latest snapshot said (the approval gate), and again on the live page
 * right before acting (`liveFormCheck`), so a page that changed meanwhile cannot slip a submission past the owner.
 */
import type { BrowserActionDetail } from '@cashcode/contracts';
import type { Locator, Page } from 'playwright-core';
import type { RefIndex } from './browser-snapshot';

export const INTERACTIVE_ACTIONS: ReadonlySet<string> = new Set(['click', 'type', 'select', 'press']);

/** True when `host` is one of the domains or a subdomain of one. */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return domains.some((domain) => name === domain || name.endsWith(`.${domain}`));
}

export interface PageFacts {
  url: string;
  refs: RefIndex;
  focusInForm: boolean;
}

function isEnter(key: unknown): boolean {
  return typeof key === 'string' && ['enter', 'numpadenter'].includes(key.trim().toLowerCase());
}

/** The approval an action needs from what is known before it runs; null when it runs under the tool's own class. */
export function assessAction(args: Record<string, unknown>, page: PageFacts | null, allowedDomains: readonly string[]): BrowserActionDetail | null {
  const action = typeof args['action'] === 'string' ? args['action'] : '';
  if (!INTERACTIVE_ACTIONS.has(action) || page === null) return null;
  const ref = typeof args['ref'] === 'string' ? args['ref'] : '';
  const detail = (reason: BrowserActionDetail['reason']): BrowserActionDetail => {
    const out: BrowserActionDetail = { action, url: page.url, reason };
    const element = page.refs.labels.get(ref);
    if (ref !== '') out.element = element === undefined ? ref : `${element} [${ref}]`;
    if (action === 'type' && typeof args['text'] === 'string') out.text = args['text'];
    if (action === 'select' && Array.isArray(args['values'])) out.text = args['values'].map(String).join(', ');
    if (action === 'press' && typeof args['key'] === 'string') out.text = args['key'];
    return out;
  };
  let host = '';
  try {
    host = new URL(page.url).hostname;
  } catch {
    // about:blank and the like: no domain
  }
  if (allowedDomains.length > 0 && host !== '' && !hostAllowed(host, allowedDomains)) return detail('outside_allowed_domains');
  if (action === 'click' && page.refs.formSubmit.has(ref)) return detail('form_submit');
  if (action === 'type' && args['submit'] === true && (page.refs.formField.has(ref) || page.refs.formSubmit.has(ref))) return detail('form_submit');
  if (action === 'press' && isEnter(args['key']) && page.focusInForm) return detail('form_submit');
  return null;
}

/*
 * The checks on the live page run inside the page (Playwright serialises the functions); the API is compiled without
 * the DOM types, so they see the few members they use through this shape. A hostile page could lie to them, which is
 * why the approval also covers a page outside the allowed domains.
 */
interface PageElement {
  tagName: string;
  form?: PageElement | null;
  closest(selector: string): PageElement | null;
  getAttribute(name: string): string | null;
}

/** On the live page: does this click submit a form (a submit control of a form, or an element inside one)? */
export async function clickSubmits(target: Locator): Promise<boolean> {
  const submits = await target.evaluate((node: unknown) => {
    const control = (node as PageElement).closest('button, input');
    if (control === null || control.form === null || control.form === undefined) return false;
    const type = (control.getAttribute('type') || (control.tagName === 'BUTTON' ? 'submit' : 'text')).toLowerCase();
    return type === 'submit' || type === 'image';
  });
  return submits === true;
}

/** On the live page: is the element in a form (Enter in it may submit the form)? */
export async function inForm(target: Locator): Promise<boolean> {
  const within = await target.evaluate((node: unknown) => {
    const element = node as PageElement;
    return (element.form || element.closest('form')) != null;
  });
  return within === true;
}

/** On the live page: is the focused element in a form? */
export async function focusInForm(page: Page): Promise<boolean> {
  const within = await page
    .evaluate(() => {
      const doc = (globalThis as unknown as { document: { activeElement: PageElement | null; body: PageElement } }).document;
      const active = doc.activeElement;
      return active !== null && active !== doc.body && (active.form || active.closest('form')) != null;
    })
    .catch(() => false);
  return within === true;
}
