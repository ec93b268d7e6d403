/**
 * The server's browser (openspec browser "Requirement: One browser context per chat"): one Chromium process, started
 * on the first `browser` call and shut down with the server or when no chat has used it for the idle time; one
 * browser context per chat, closed when the chat leaves it idle, when the chat is deleted and at shutdown.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { rmSync } from 'node:fs';
import type { BrowserStatus } from '@cashcode/contracts';
import { formatEvent } from '../../common/log-format';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { OnAppEvent } from '../../events/event-bus';
import type { SessionDeletedEvent } from '../../events/app-events';
import { findExecutable } from '../sandbox/exec-sandbox';
import { ExecSandboxService, protectedPathsOf } from '../sandbox/exec-sandbox.service';
import { DEFAULT_EXEC_PATH } from '../tools/exec-process';
import { SsrfGuard } from '../tools/ssrf-guard';
import { WorkspacePaths } from '../tools/workspace-paths';
import { BrowserSession } from './browser-session';
import { isExecutable, launchChromium, type LaunchedChromium } from './chromium-launcher';

/** how long closing Chromium may take at shutdown or when the last chat left it */
const CLOSE_TIMEOUT_MS = 5000;

@Injectable()
export class BrowserService implements OnApplicationShutdown {
  private readonly logger = new Logger('Browser');
  private launched: Promise<LaunchedChromium> | null = null;
  private readonly sessions = new Map<string, Promise<BrowserSession>>();
  /** the sessions that are open, for synchronous reads */
  private readonly ready = new Map<string, BrowserSession>();
  private readonly guard: SsrfGuard;
  private workspace: WorkspacePaths | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: ExecSandboxService,
  ) {
    this.guard = new SsrfGuard({ allowPrivate: config.fetchAllowPrivate, trustedHosts: config.browser.trustedHosts });
  }

  /** CASHCODE_BROWSER_ENABLED=true: the server does not start without Chromium */
  get required(): boolean {
    return this.config.browser.enabled === true;
  }

  get allowedDomains(): readonly string[] {
    return this.config.browser.allowedDomains;
  }

  get timeoutMs(): number {
    return this.config.browser.timeoutMs;
  }

  get maxTabs(): number {
    return this.config.browser.maxTabs;
  }

  get snapshotMaxChars(): number {
    return this.config.browser.snapshotMaxChars;
  }

  /** Whether the tool is offered: CASHCODE_BROWSER_ENABLED, else whether the Chromium executable is there. */
  status(): BrowserStatus {
    const settings = this.config.browser;
    const found = isExecutable(settings.executable);
    const base = { sandboxed: this.sandboxActive(), allow_private: this.config.fetchAllowPrivate };
    if (settings.enabled === false) return { enabled: false, ...base, reason: 'CASHCODE_BROWSER_ENABLED=false' };
    if (!found) return { enabled: false, ...base, reason: `Chromium was not found at ${settings.executable}` };
    return { enabled: true, executable: settings.executable, ...base };
  }

  /** The chat's browser context, opened (and the browser started) when needed. */
  session(chatId: string): Promise<BrowserSession> {
    if (this.closing) return Promise.reject(new Error('the server is shutting down'));
    let session = this.sessions.get(chatId);
    if (session === undefined) {
      session = this.openSession().then((ready) => {
        this.ready.set(chatId, ready);
        return ready;
      });
      this.sessions.set(chatId, session);
      session.catch(() => this.sessions.delete(chatId));
      this.startSweeper();
    }
    return session;
  }

  /** Synchronous view of a ready session (for the approval rules). */
  readySession(chatId: string): BrowserSession | null {
    return this.ready.get(chatId) ?? null;
  }

  async closeSession(chatId: string): Promise<void> {
    const session = this.sessions.get(chatId);
    if (session === undefined) return;
    this.sessions.delete(chatId);
    this.ready.delete(chatId);
    const open = await session.catch(() => null);
    await open?.close();
    this.logger.debug(formatEvent('browser.context.closed', { chat_id: chatId }));
    if (this.sessions.size === 0) await this.stopBrowser();
  }

  @OnAppEvent('session.deleted')
  async onSessionDeleted(event: SessionDeletedEvent): Promise<void> {
    await this.closeSession(event.chatId);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    for (const chatId of [...this.sessions.keys()]) await this.closeSession(chatId);
    await this.stopBrowser();
  }

  private async openSession(): Promise<BrowserSession> {
    const { browser } = await this.browser();
    const settings = this.config.browser;
    this.workspace ??= new WorkspacePaths(this.config.workspaceDir, [], []);
    const session = await BrowserSession.open(browser, {
      network: { guard: this.guard, timeoutMs: settings.timeoutMs, maxBytes: settings.maxResponseBytes },
      timeoutMs: settings.timeoutMs,
      maxTabs: settings.maxTabs,
      workspace: this.workspace,
    });
    return session;
  }

  private browser(): Promise<LaunchedChromium> {
    if (this.launched === null) {
      const sandbox = this.sandboxActive()
        ? { bwrapPath: findExecutable('bwrap', this.config.skillBinPath || DEFAULT_EXEC_PATH) ?? 'bwrap', protectedPaths: protectedPathsOf(this.config) }
        : null;
      const started = Date.now();
      this.launched = launchChromium(this.config.browser.executable, sandbox, this.config.browser.timeoutMs).then((launched) => {
        this.logger.log(formatEvent('browser.started', { sandboxed: launched.sandboxed, duration_ms: Date.now() - started }));
        launched.browser.on('disconnected', () => {
          if (this.launched !== null) void this.forget(launched);
        });
        return launched;
      });
      this.launched.catch((error: unknown) => {
        this.logger.warn(formatEvent('browser.start_failed', { error: error instanceof Error ? error.message.split('\n')[0] : 'unknown' }));
        this.launched = null;
      });
    }
    return this.launched;
  }

  /** The browser went away (crash or close): its sessions are gone too. */
  private async forget(launched: LaunchedChromium): Promise<void> {
    this.launched = null;
    this.sessions.clear();
    this.ready.clear();
    rmSync(launched.dir, { recursive: true, force: true });
  }

  private async stopBrowser(): Promise<void> {
    const launched = this.launched;
    if (launched === null) return;
    this.launched = null;
    const ready = await launched.catch(() => null);
    if (ready === null) return;
    // a Chromium that does not answer must not hold the server's shutdown: Playwright kills the process meanwhile
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      ready.browser.close().catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    rmSync(ready.dir, { recursive: true, force: true });
    this.logger.debug(formatEvent('browser.stopped', {}));
  }

  private sandboxActive(): boolean {
    const status = this.sandbox.status();
    return status.active && status.kind === 'bwrap';
  }

  /** Closes the contexts of chats idle for longer than CASHCODE_BROWSER_IDLE_SEC. */
  private startSweeper(): void {
    if (this.sweeper !== null) return;
    const every = Math.min(30_000, Math.max(250, Math.floor(this.config.browser.idleMs / 4)));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [chatId, session] of this.ready) {
        if (now - session.lastUsed > this.config.browser.idleMs && !session.busy) void this.closeSession(chatId);
      }
      if (this.sessions.size === 0 && this.sweeper !== null) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, every);
    this.sweeper.unref();
  }
}
