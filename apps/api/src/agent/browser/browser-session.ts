/**
 * One chat's browser (openspec browser "Requirement: One browser context per chat"): a Playwright browser context
 * with its tabs, every request routed through `browser-network.ts`, WebSockets and service workers refused,
 * JavaScript dialogs dismissed, downloads saved into the workspace, and a cap on open tabs. What happened during an
 * action (refused requests, dialogs, downloads, closed tabs) is collected as notes the tool reports with its result.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { WorkspacePaths } from '../tools/workspace-paths';
import { FetchFailure, guardedFetch } from '../tools/guarded-fetch';
import { saveDownload } from './browser-downloads';
import { serveRoute, type BrowserNetworkOptions, type PendingRedirect, type RefusedRequest } from './browser-network';
import { emptyRefIndex, type RefIndex } from './browser-snapshot';

export interface BrowserSessionOptions {
  network: BrowserNetworkOptions;
  timeoutMs: number;
  maxTabs: number;
  workspace: WorkspacePaths;
}

/** What the page did on its own during an action. */
export interface SessionNotes {
  refused: RefusedRequest[];
  dialogs: string[];
  downloads: string[];
  /** tabs closed because the page opened more than the limit */
  tabsClosed: number;
  tabsOpened: number;
  /** window.open calls a page made beyond the tab limit (refused in the page) */
  tabsRefused: number;
}

function emptyNotes(): SessionNotes {
  return { refused: [], dialogs: [], downloads: [], tabsClosed: 0, tabsOpened: 0, tabsRefused: 0 };
}

/** Counts a page's window.open calls and refuses those beyond the limit (reported through the exposed binding). */
function tabLimitScript(limit: number): string {
  return `(() => {
  const open = window.open;
  let opened = 0;
  window.open = function (...args) {
    if (opened >= ${limit}) {
      try { window.__cashcodeTabRefused(); } catch {}
      return null;
    }
    opened += 1;
    return open.apply(this, args);
  };
})();`;
}

export class BrowserSession {
  private activePage: Page | null = null;
  private notes = emptyNotes();
  private readonly pendingDownloads = new Set<Promise<void>>();
  private redirect: PendingRedirect | null = null;
  /** the tabs this session keeps (a tab opened beyond the limit never joins) */
  private readonly open = new Set<Page>();
  /** routed document requests (navigations) being served right now */
  private inFlight = 0;
  /** the refs of the latest snapshot, per tab */
  private readonly refIndexes = new WeakMap<Page, RefIndex>();
  /** the focused element was inside a form after the last action (Enter may submit it) */
  focusInForm = false;
  lastUsed = Date.now();
  /** an action is running (the idle sweep leaves the session alone) */
  busy = false;

  private constructor(
    readonly context: BrowserContext,
    private readonly options: BrowserSessionOptions,
  ) {}

  static async open(browser: Browser, options: BrowserSessionOptions): Promise<BrowserSession> {
    const context = await browser.newContext({
      acceptDownloads: true,
      serviceWorkers: 'block',
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
    });
    const session = new BrowserSession(context, options);
    try {
      context.setDefaultTimeout(options.timeoutMs);
      context.setDefaultNavigationTimeout(options.timeoutMs);
      await context.route('**/*', async (route) => {
        // documents only: a page's long-polling requests must not hold every action up
        const document = route.request().isNavigationRequest() ? 1 : 0;
        session.inFlight += document;
        try {
          await serveRoute(route, options.network, {
            refused: (entry) => session.notes.refused.push(entry),
            redirected: (redirect) => (session.redirect = redirect),
            executableRefused: (line) => session.notes.downloads.push(line),
          });
        } finally {
          session.inFlight -= document;
        }
      });
      // a page may open at most maxTabs windows itself; the context closes any tab beyond the limit anyway
      await context.exposeBinding('__cashcodeTabRefused', () => {
        session.notes.tabsRefused += 1;
      });
      await context.addInitScript(tabLimitScript(options.maxTabs));
      await context.routeWebSocket(() => true, (socket) => {
        session.notes.refused.push({ url: socket.url(), reason: 'WebSockets are not available to the browser tool', blocked: true, navigation: false });
        void socket.close({ code: 1008, reason: 'not available' }).catch(() => undefined);
      });
      context.on('page', (page) => session.adopt(page));
    } catch (error) {
      await context.close().catch(() => undefined);
      throw error;
    }
    return session;
  }

  /** The tab actions apply to (a new blank one when none is open). */
  async page(): Promise<Page> {
    if (this.activePage !== null && !this.activePage.isClosed()) return this.activePage;
    const open = this.context.pages().filter((page) => !page.isClosed());
    this.activePage = open[open.length - 1] ?? (await this.context.newPage());
    return this.activePage;
  }

  /** The active tab when one is open, without opening one. */
  currentPage(): Page | null {
    if (this.activePage !== null && !this.activePage.isClosed()) return this.activePage;
    return null;
  }

  /**
   * Waits until the documents being loaded are served (bounded by `timeoutMs`), after a short grace for a navigation
   * the action started: a key or click that submits a form returns only once the answer is in.
   */
  async quiet(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await new Promise((resolve) => setTimeout(resolve, 50));
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  tabs(): Page[] {
    return this.context.pages().filter((page) => !page.isClosed() && this.open.has(page));
  }

  activate(page: Page): void {
    this.activePage = page;
  }

  refsOf(page: Page): RefIndex {
    return this.refIndexes.get(page) ?? emptyRefIndex();
  }

  setRefs(page: Page, refs: RefIndex): void {
    this.refIndexes.set(page, refs);
  }

  /** The redirect of the tab's document the last request got, once. */
  takeRedirect(): PendingRedirect | null {
    const redirect = this.redirect;
    this.redirect = null;
    return redirect;
  }

  /** Starts collecting notes for one action. */
  beginAction(): void {
    this.busy = true;
    this.lastUsed = Date.now();
    this.notes = emptyNotes();
    this.redirect = null;
  }

  /** Ends an action: waits (bounded) for downloads it started, returns its notes. */
  async endAction(waitMs: number): Promise<SessionNotes> {
    if (this.pendingDownloads.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.pendingDownloads]),
        new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
      ]);
      clearTimeout(timer);
    }
    this.lastUsed = Date.now();
    this.busy = false;
    return this.notes;
  }

  async close(): Promise<void> {
    await this.context.close().catch(() => undefined);
  }

  private async refetch(url: string): Promise<Buffer> {
    const { guard, timeoutMs, maxBytes } = this.options.network;
    try {
      const fetched = await guardedFetch(new URL(url), {
        guard,
        timeoutMs,
        maxBytes: maxBytes + 1,
        maxRedirects: 5,
        userAgent: 'Mozilla/5.0 (compatible; CashCode/1.0)',
        accept: '*/*',
        signal: new AbortController().signal,
      });
      return fetched.body;
    } catch (error) {
      throw new Error(error instanceof FetchFailure ? error.message : 'the download could not be fetched', { cause: error });
    }
  }

  private adopt(page: Page): void {
    if (this.open.size >= this.options.maxTabs) {
      this.notes.tabsClosed += 1;
      void page.close().catch(() => undefined);
      return;
    }
    this.open.add(page);
    page.once('close', () => this.open.delete(page));
    if (this.activePage !== null) this.notes.tabsOpened += 1;
    page.on('dialog', (dialog) => {
      const message = dialog.message();
      this.notes.dialogs.push(`${dialog.type()} ${JSON.stringify(message.length > 300 ? `${message.slice(0, 299)}…` : message)}`);
      // leaving the page is allowed; every other dialog is dismissed (no text is entered, nothing is confirmed)
      void (dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    });
    page.on('download', (download) => {
      const saving = saveDownload(download, this.options.workspace, this.options.network.maxBytes, (url) => this.refetch(url)).then((line) => {
        this.notes.downloads.push(line);
      });
      this.pendingDownloads.add(saving);
      void saving.finally(() => this.pendingDownloads.delete(saving));
    });
  }
}
