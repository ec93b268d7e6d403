/**
 * The actions of the `browser` tool on a chat's session (openspec browser "Requirement: Actions"). Each returns what
 * happened in a line or two; the tool adds the page's state, the notes of the session and the snapshot.
 */
import type { Locator, Page } from 'playwright-core';
import type { ToolImage } from '../agent-tool';
import { ToolInputError } from '../agent-tool';
import { formatBytes, formatSeconds } from '../tools/tool-args';
import { clickSubmits, focusInForm, inForm } from './browser-risk';
import type { BrowserSession } from './browser-session';
import { isRef } from './browser-snapshot';

export interface ActionContext {
  session: BrowserSession;
  timeoutMs: number;
  /** the gate already judged this call as needing the owner (and the owner, or the owner's policy, let it run) */
  cleared: boolean;
}

export interface ActionOutcome {
  /** what happened */
  text: string;
  /** add a fresh snapshot (the page changed) */
  snapshot: boolean;
  images?: ToolImage[];
}

/** A refusal the model can act on (its text becomes the tool error). */
export class BrowserActionError extends Error {}

/** An action that needs the owner's approval, found only on the live page. */
export class NeedsApprovalError extends BrowserActionError {}

const MAX_TEXT_CHARS = 10_000;
const MAX_OPTIONS = 50;
const SCROLL_PIXELS = 600;

export function requireRef(args: Record<string, unknown>): string {
  const ref = args['ref'];
  if (typeof ref !== 'string' || !isRef(ref.trim())) {
    throw new ToolInputError('ref must be an element reference from the latest snapshot, like "e12"');
  }
  return ref.trim();
}

/** The element of a ref of the latest snapshot; a clear error when the page has no such element. */
async function element(page: Page, ref: string): Promise<Locator> {
  const target = page.getByRef(ref);
  const count = await target.count().catch(() => 0);
  if (count === 0) throw new BrowserActionError(`unknown ref ${ref}: no element of the latest snapshot has it; take a new snapshot`);
  return target.first();
}

/** Waits for what a click or key started: its requests, then the document (bounded; a page that keeps loading is not an error here). */
async function settle(ctx: ActionContext, page: Page): Promise<void> {
  await ctx.session.quiet(ctx.timeoutMs);
  await page.waitForLoadState('domcontentloaded', { timeout: ctx.timeoutMs }).catch(() => undefined);
}

/** A link with a `download` attribute: its download bypasses the page's route, so the click waits for it. */
async function startsDownload(target: Locator): Promise<boolean> {
  const link = await target.evaluate((node: unknown) => (node as { closest(selector: string): unknown }).closest('a[download]') !== null);
  return link === true;
}

export async function navigate(ctx: ActionContext, rawUrl: string): Promise<ActionOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl.trim());
  } catch {
    throw new ToolInputError(`url is not a valid URL: ${rawUrl.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BrowserActionError(`only http and https pages can be opened (got ${url.protocol.replace(/:$/, '')})`);
  }
  const page = await ctx.session.page();
  await page.goto(url.toString(), { waitUntil: 'domcontentloaded', timeout: ctx.timeoutMs });
  // sub-resources get a short while more; a page that never finishes them is still usable
  await page.waitForLoadState('load', { timeout: Math.min(2000, ctx.timeoutMs) }).catch(() => undefined);
  return { text: `Opened ${page.url()}`, snapshot: true };
}

export async function click(ctx: ActionContext, ref: string): Promise<ActionOutcome> {
  const page = await ctx.session.page();
  const target = await element(page, ref);
  if (!ctx.cleared && (await clickSubmits(target))) {
    ctx.session.refsOf(page).formSubmit.add(ref);
    throw new NeedsApprovalError(`clicking ${ref} submits a form, which needs the owner's approval; call the same click again to ask the owner`);
  }
  const before = page.url();
  const download = (await startsDownload(target)) ? page.waitForEvent('download', { timeout: ctx.timeoutMs }).catch(() => null) : null;
  await target.click({ timeout: ctx.timeoutMs });
  await download;
  await settle(ctx, page);
  ctx.session.focusInForm = await focusInForm(page);
  return { text: page.url() !== before ? `Clicked ${ref}; the page is now ${page.url()}` : `Clicked ${ref}`, snapshot: true };
}

export async function type(ctx: ActionContext, ref: string, text: string, submit: boolean): Promise<ActionOutcome> {
  if (text.length > MAX_TEXT_CHARS) throw new ToolInputError(`text is longer than ${MAX_TEXT_CHARS} characters`);
  const page = await ctx.session.page();
  const target = await element(page, ref);
  if (submit && !ctx.cleared && (await inForm(target))) {
    ctx.session.refsOf(page).formField.add(ref);
    throw new NeedsApprovalError(`typing into ${ref} with submit sends a form, which needs the owner's approval; call it again to ask the owner`);
  }
  await target.fill(text, { timeout: ctx.timeoutMs });
  if (submit) {
    await target.press('Enter', { timeout: ctx.timeoutMs });
    await settle(ctx, page);
  }
  ctx.session.focusInForm = await focusInForm(page);
  return { text: `Typed ${text.length} characters into ${ref}${submit ? ' and pressed Enter' : ''}`, snapshot: submit };
}

export async function select(ctx: ActionContext, ref: string, values: unknown): Promise<ActionOutcome> {
  if (!Array.isArray(values) || values.length === 0 || values.length > MAX_OPTIONS || !values.every((v) => typeof v === 'string')) {
    throw new ToolInputError(`values must be a list of 1 to ${MAX_OPTIONS} option values or labels`);
  }
  const page = await ctx.session.page();
  const target = await element(page, ref);
  const chosen = await target.selectOption(values as string[], { timeout: ctx.timeoutMs });
  ctx.session.focusInForm = await focusInForm(page);
  return { text: `Selected ${chosen.length === 0 ? 'nothing' : chosen.map((v) => JSON.stringify(v)).join(', ')} in ${ref}`, snapshot: false };
}

export async function press(ctx: ActionContext, key: string): Promise<ActionOutcome> {
  if (!/^[A-Za-z0-9+]{1,40}$/.test(key)) throw new ToolInputError('key must be a key name like "Enter", "Escape", "ArrowDown" or "Control+A"');
  const page = await ctx.session.page();
  if (!ctx.cleared && /^(?:numpad)?enter$/i.test(key) && (await focusInForm(page))) {
    ctx.session.focusInForm = true;
    throw new NeedsApprovalError("Enter in a form field may send the form, which needs the owner's approval; call it again to ask the owner");
  }
  const before = page.url();
  await page.keyboard.press(key);
  await settle(ctx, page);
  ctx.session.focusInForm = await focusInForm(page);
  return { text: `Pressed ${key}`, snapshot: page.url() !== before };
}

export async function scroll(ctx: ActionContext, args: Record<string, unknown>): Promise<ActionOutcome> {
  const page = await ctx.session.page();
  if (args['ref'] !== undefined) {
    const ref = requireRef(args);
    await (await element(page, ref)).scrollIntoViewIfNeeded({ timeout: ctx.timeoutMs });
    return { text: `Scrolled ${ref} into view`, snapshot: false };
  }
  const direction = args['direction'] === 'up' ? -1 : 1;
  await page.mouse.wheel(0, direction * SCROLL_PIXELS);
  const position = await page.evaluate('Math.round(window.scrollY) + " of " + Math.round(document.documentElement.scrollHeight)').catch(() => '?');
  return { text: `Scrolled ${direction < 0 ? 'up' : 'down'} (now at ${String(position)} px)`, snapshot: false };
}

export async function back(ctx: ActionContext): Promise<ActionOutcome> {
  const page = await ctx.session.page();
  const response = await page.goBack({ waitUntil: 'domcontentloaded', timeout: ctx.timeoutMs });
  if (response === null && page.url() === 'about:blank') throw new BrowserActionError('there is no previous page in this tab');
  return { text: `Went back to ${page.url()}`, snapshot: true };
}

export async function screenshot(ctx: ActionContext): Promise<ActionOutcome> {
  const page = await ctx.session.page();
  const shot = await page.screenshot({ type: 'jpeg', quality: 70, timeout: ctx.timeoutMs });
  const size = page.viewportSize();
  const title = await page.title().catch(() => '');
  return {
    text:
      `Screenshot of ${page.url()} ${JSON.stringify(title)}: the visible part (${size?.width ?? '?'}×${size?.height ?? '?'} px, ` +
      `JPEG, ${formatBytes(shot.length)}).\n[image: image/jpeg, ${formatBytes(shot.length)}]\nIt is attached as an image when the model accepts images; otherwise use ` +
      'action "snapshot" to read the page.',
    snapshot: false,
    images: [{ mimeType: 'image/jpeg', data: shot.toString('base64') }],
  };
}

export async function tabs(ctx: ActionContext, index: number | undefined): Promise<ActionOutcome> {
  const open = ctx.session.tabs();
  if (index !== undefined) {
    const page = open[index];
    if (page === undefined) throw new BrowserActionError(`there is no tab ${index} (${open.length} open)`);
    ctx.session.activate(page);
    await page.bringToFront().catch(() => undefined);
    return { text: `Switched to tab ${index}: ${page.url()}`, snapshot: true };
  }
  const current = ctx.session.currentPage();
  const lines = await Promise.all(
    open.map(async (page, i) => `${i}: ${JSON.stringify(await page.title().catch(() => ''))} ${page.url()}${page === current ? ' (active)' : ''}`),
  );
  return { text: lines.length === 0 ? 'No tabs are open' : `Tabs:\n${lines.join('\n')}`, snapshot: false };
}

export async function closeTab(ctx: ActionContext, index: number | undefined): Promise<ActionOutcome & { closedAll: boolean }> {
  if (index === undefined) return { text: "Closed this chat's browser (all tabs, cookies and storage)", snapshot: false, closedAll: true };
  const page = ctx.session.tabs()[index];
  if (page === undefined) throw new BrowserActionError(`there is no tab ${index}`);
  await page.close();
  return { text: `Closed tab ${index}`, snapshot: false, closedAll: false };
}

/** A Playwright failure as a short message for the model (no stack, no call log). */
export function describeFailure(error: unknown, timeoutMs: number): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === 'TimeoutError') return `timed out after ${formatSeconds(timeoutMs)}`;
  const first = message.split('\n')[0] ?? message;
  return first.replace(/^[a-zA-Z.]+: /, '').slice(0, 300);
}
