/**
 * The `browser` tool through real turns (openspec browser): the fake model asks for browser actions, a real headless
 * Chromium (Debian's, inside bubblewrap when the exec sandbox has it) loads pages from a local server of this test.
 * The local server is on loopback, which the address rules refuse: the main app runs with the owner's
 * CASHCODE_FETCH_ALLOW_PRIVATE=true, a second app without it shows loopback and a redirect to it refused.
 */
import { existsSync, promises as fs } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { AgentRunner, type RunRequest } from '../src/agent/agent-runner';
import { BrowserService } from '../src/agent/browser/browser.service';
import { ToolRegistry } from '../src/agent/tool-registry';
import { loadBrowserConfig } from '../src/config/browser-config';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { unframed } from './support/untrusted-frame';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const CHROMIUM = '/usr/bin/chromium';
const inCi = ['1', 'true', 'yes'].includes((process.env['CI'] ?? '').toLowerCase());

/** `describe` when Chromium is installed; in CI (which installs it) the tests then fail instead of being skipped. */
function describeWithChromium(name: string, body: () => void): void {
  if (existsSync(CHROMIUM) || inCi) {
    describe(name, body);
  } else {
    // eslint-disable-next-line no-console
    console.warn(`skipping "${name}": ${CHROMIUM} is missing (apt-get install -y chromium)`);
    describe.skip(name, body);
  }
}

interface Pages {
  server: Server;
  url: string;
  submissions: string[];
}

const HOME = `<!doctype html><title>Home</title><h1>Welcome home</h1>
<a href="/next">Next page</a>
<form method="post" action="/submit"><label>Query <input name="q"></label><button>Send</button></form>`;

function page(res: ServerResponse, html: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(html);
}

async function startPages(): Promise<Pages> {
  const state: Pages = { server: null as unknown as Server, url: '', submissions: [] };
  state.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    switch (path) {
      case '/':
        return page(res, HOME);
      case '/detached':
        return page(res, '<!doctype html><title>Detached</title><form id="f" method="post" action="/submit"><input name="q" value="dogs"></form><button form="f">Outside send</button>');
      case '/socket':
        return page(res, '<!doctype html><title>Socket</title><script>new WebSocket("ws://127.0.0.1:9/feed")</script><p>socket page</p>');
      case '/embeds-loopback':
        return page(res, `<!doctype html><title>Embeds</title><p>embeds</p><img src="${state.url.replace('localhost', '127.0.0.1')}/next" alt="x">`);
      case '/next':
        return page(res, '<!doctype html><title>Next</title><h1>The second page</h1>');
      case '/submit': {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          state.submissions.push(body);
          page(res, '<!doctype html><title>Sent</title><p>Thanks for the query</p>');
        });
        return;
      }
      case '/to-loopback':
        res.writeHead(302, { location: `${state.url.replace('localhost', '127.0.0.1')}/next` });
        return res.end();
      case '/never':
        return; // never answers
      case '/huge': {
        res.writeHead(200, { 'content-type': 'text/html' });
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < 50 && res.write(chunk)) sent += 1;
          if (sent >= 50) res.end();
          else res.once('drain', () => ((sent += 1), pump()));
        };
        return pump();
      }
      case '/tabs':
        return page(res, '<!doctype html><title>Tabs</title><script>for (let i = 0; i < 100; i++) window.open("/next");</script><p>many tabs</p>');
      case '/dialog':
        return page(res, '<!doctype html><title>Dialog</title><script>alert("Hello from the page")</script><p>after the dialog</p>');
      case '/download-page':
        return page(res, '<!doctype html><title>Get</title><a href="/prog" download="tool.bin">Get the tool</a><a href="/notes" download="notes.txt">Get notes</a>');
      case '/prog':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(100)]));
      case '/notes':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('plain notes\n');
      default:
        return page(res, 'not found', 404);
    }
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://localhost:${(state.server.address() as AddressInfo).port}`;
  return state;
}

type ToolMessage = { role: string; content: string; tool_call_id?: string };
const toolMessage = (r: RecordedRequest | undefined, id: string): string => {
  const messages = (r?.body as { messages: ToolMessage[] }).messages;
  return messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content ?? '';
};
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
const browserCall = (id: string, args: Record<string, unknown>) => ({ id, name: 'browser', arguments: JSON.stringify(args) });
const refOf = (text: string, label: string): string => {
  const at = text.indexOf(label);
  const match = at === -1 ? null : /\[ref=(e\d+)\]/.exec(text.slice(at));
  if (!match) throw new Error(`no ref for ${label} in:\n${text}`);
  return match[1] as string;
};

describeWithChromium('browser tool (e2e)', () => {
  let fake: FakeModelServer;
  let pages: Pages;
  let t: TestApp;
  let client: WsTestClient;
  let counter = 0;
  let acceptsImages = false;

  /** One turn: the model makes one browser call, then answers; returns the tool message the model got. */
  async function browse(chatId: string, args: Record<string, unknown>, via: TestApp = t, ws: WsTestClient = client): Promise<{ text: string; events: ServerEvent[] }> {
    fake.reset();
    const id = `b${++counter}`;
    fake.enqueue({ toolCalls: [browserCall(id, args)] }, { content: 'done' });
    const before = ws.chatEvents(chatId).length;
    const end = Promise.race([ws.next('done', (e) => e.chat_id === chatId, 60_000), ws.next('error', (e) => e.chat_id === chatId, 60_000)]);
    ws.sendMessage(chatId, 'use the browser');
    await end;
    void via;
    return { text: toolMessage(fake.completions[1], id), events: ws.chatEvents(chatId).slice(before) };
  }

  beforeAll(async () => {
    [fake, pages] = await Promise.all([FakeModelServer.start(), startPages()]);
    t = await startTestApp({ env: { CASHCODE_FETCH_ALLOW_PRIVATE: 'true', CASHCODE_BROWSER_TIMEOUT_MS: '3000' } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    // the screenshot test sets whether the model takes images on the runner's request
    const runner = t.app.get(AgentRunner);
    const run = runner.run.bind(runner);
    jest.spyOn(runner, 'run').mockImplementation((req: RunRequest) => run({ ...req, acceptsImages }));
    client = await WsTestClient.connect(t.wsUrl);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
    await new Promise((resolve) => pages?.server.close(resolve));
  });

  it('Scenario: the health endpoint says whether the browser is offered', async () => {
    const health = await request(t.httpUrl).get('/api/health').expect(200);
    expect(health.body.browser).toMatchObject({ enabled: true, executable: CHROMIUM, allow_private: true });
    expect(health.body.browser.sandboxed).toBe(health.body.exec_sandbox.active);
  });

  it('Scenario: the model is offered the browser tool when Chromium is available', async () => {
    await browse('browser-offered', { action: 'tabs' });
    const offered = (fake.completions[0]?.body as { tools?: Array<{ function: { name: string } }> }).tools?.map((tool) => tool.function.name);
    expect(offered).toContain('browser');
  });

  it('Scenario: navigate opens a page and hands the model its snapshot as untrusted content', async () => {
    const { text } = await browse('browser-nav', { action: 'navigate', url: `${pages.url}/` });
    expect(text).toMatch(/^<<untrusted-[0-9a-f]{16} source=browser /);
    const inner = unframed(text);
    expect(inner).toContain(`[Browser page ${pages.url}/ "Home" — untrusted content`);
    expect(inner).toMatch(/heading "Welcome home" \[level=1\] \[ref=e\d+\]/);
    expect(inner).toMatch(/link "Next page" \[ref=e\d+\]/);
  });

  it('Scenario: a link is clicked by its ref', async () => {
    const chatId = 'browser-click';
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    const { text } = await browse(chatId, { action: 'click', ref: refOf(opened.text, 'link "Next page"') });
    expect(unframed(text)).toContain(`Clicked`);
    expect(unframed(text)).toContain('heading "The second page"');
    const snap = await browse(chatId, { action: 'snapshot' });
    expect(unframed(snap.text)).toContain(`[Browser page ${pages.url}/next "Next"`);
  });

  it('Scenario: submitting a form asks the owner; approve sends it', async () => {
    const chatId = 'browser-form-yes';
    pages.submissions.length = 0;
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    const typed = await browse(chatId, { action: 'type', ref: refOf(opened.text, 'textbox "Query"'), text: 'cats' });
    expect(typed.events.some((e) => e.event === 'approval_request')).toBe(false);
    fake.reset();
    fake.enqueue({ toolCalls: [browserCall('send1', { action: 'click', ref: refOf(opened.text, 'button "Send"') })] }, { content: 'sent' });
    const end = client.next('done', (e) => e.chat_id === chatId, 60_000);
    client.sendMessage(chatId, 'send it');
    const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId && e.call_id === 'send1', 30_000);
    expect(asked).toMatchObject({ tool: 'browser', risk: 'browser_action', browser: { action: 'click', url: `${pages.url}/`, reason: 'form_submit' } });
    expect(asked.browser?.element).toContain('button "Send"');
    expect(asked.always_scope).toBeUndefined();
    expect(pages.submissions).toEqual([]);
    client.send({ type: 'approval', chat_id: chatId, call_id: 'send1', decision: 'allow_once' });
    await end;
    expect(pages.submissions).toEqual(['q=cats']);
    expect(unframed(toolMessage(fake.completions[1], 'send1'))).toContain('Thanks for the query');
  });

  it('Scenario: submitting a form asks the owner; deny sends nothing', async () => {
    const chatId = 'browser-form-no';
    pages.submissions.length = 0;
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    fake.reset();
    fake.enqueue({ toolCalls: [browserCall('send2', { action: 'click', ref: refOf(opened.text, 'button "Send"') })] }, { content: 'not sent' });
    const end = client.next('done', (e) => e.chat_id === chatId, 60_000);
    client.sendMessage(chatId, 'send it');
    await client.waitFor('approval_request', (e) => e.chat_id === chatId && e.call_id === 'send2', 30_000);
    client.send({ type: 'approval', chat_id: chatId, call_id: 'send2', decision: 'deny' });
    await end;
    expect(pages.submissions).toEqual([]);
    expect(toolMessage(fake.completions[1], 'send2')).toMatch(/denied/i);
  });

  it('Scenario: Enter in a form field asks the owner', async () => {
    const chatId = 'browser-form-enter';
    pages.submissions.length = 0;
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    await browse(chatId, { action: 'type', ref: refOf(opened.text, 'textbox "Query"'), text: 'birds' });
    fake.reset();
    fake.enqueue({ toolCalls: [browserCall('enter1', { action: 'press', key: 'Enter' })] }, { content: 'sent' });
    const end = client.next('done', (e) => e.chat_id === chatId, 60_000);
    client.sendMessage(chatId, 'press enter');
    const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId && e.call_id === 'enter1', 30_000);
    expect(asked.browser).toMatchObject({ action: 'press', text: 'Enter', reason: 'form_submit', url: `${pages.url}/` });
    expect(pages.submissions).toEqual([]);
    client.send({ type: 'approval', chat_id: chatId, call_id: 'enter1', decision: 'allow_once' });
    await end;
    expect(pages.submissions).toEqual(['q=birds']);
  });

  it('Scenario: a submission found only on the live page is refused, and the same call then asks', async () => {
    const chatId = 'browser-form-live';
    pages.submissions.length = 0;
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/detached` });
    const ref = refOf(opened.text, 'button "Outside send"');
    const first = await browse(chatId, { action: 'click', ref });
    expect(first.text).toMatch(new RegExp(`^Error: click failed: clicking ${ref} submits a form, which needs the owner's approval`));
    expect(first.events.some((e) => e.event === 'approval_request')).toBe(false);
    expect(pages.submissions).toEqual([]);
    fake.reset();
    fake.enqueue({ toolCalls: [browserCall('live2', { action: 'click', ref })] }, { content: 'not sent' });
    const end = client.next('done', (e) => e.chat_id === chatId, 60_000);
    client.sendMessage(chatId, 'send it');
    const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId && e.call_id === 'live2', 30_000);
    expect(asked.browser).toMatchObject({ action: 'click', reason: 'form_submit' });
    client.send({ type: 'approval', chat_id: chatId, call_id: 'live2', decision: 'deny' });
    await end;
    expect(pages.submissions).toEqual([]);
  });

  it('Scenario: a screenshot reaches the model as an image placeholder and a description', async () => {
    const chatId = 'browser-shot';
    await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    const { text, events } = await browse(chatId, { action: 'screenshot' });
    expect(text).toContain(`Screenshot of ${pages.url}/ "Home"`);
    expect(text).toMatch(/\[image: image\/jpeg, [\d.]+ KiB\]/);
    const result = events.find((e) => e.event === 'tool_result') as Extract<ServerEvent, { event: 'tool_result' }>;
    expect(result.ok).toBe(true);
  });

  it('Scenario: a screenshot reaches a model that takes images as image content for that turn only', async () => {
    const chatId = 'browser-shot-image';
    await browse(chatId, { action: 'navigate', url: `${pages.url}/` });
    acceptsImages = true;
    try {
      await browse(chatId, { action: 'screenshot' });
    } finally {
      acceptsImages = false;
    }
    type Part = { type: string; image_url?: { url: string } };
    const parts = (fake.completions[1]?.body as { messages: Array<{ content: unknown }> }).messages.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as Part[]).filter((p) => p.type === 'image_url') : [],
    );
    expect(parts).toHaveLength(1);
    expect(parts[0]?.image_url?.url.startsWith('data:image/jpeg;base64,/9j/')).toBe(true);
    const history = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
    expect(history).toContain('[image: image/jpeg, ');
    expect(history).not.toContain('/9j/');
  });

  it('Scenario: a page that never finishes loading is a timeout error and the turn goes on', async () => {
    const { text, events } = await browse('browser-timeout', { action: 'navigate', url: `${pages.url}/never` });
    expect(text).toMatch(/^Error: navigate failed: .*(timed out after 3\.0s|no response within 3\.0s)/);
    expect(events.some((e) => e.event === 'done')).toBe(true);
  });

  it('Scenario: a response larger than the cap is refused', async () => {
    const { text } = await browse('browser-huge', { action: 'navigate', url: `${pages.url}/huge` });
    expect(text).toContain('the response is larger than 10 MiB');
    expect(text).toMatch(/^Error: navigate failed/);
  });

  it('Scenario: a page that opens 100 tabs is held to the tab limit', async () => {
    const chatId = 'browser-tabs';
    const { text } = await browse(chatId, { action: 'navigate', url: `${pages.url}/tabs` });
    expect(text).toMatch(/^Error: the page tried to open more tabs than allowed \(10\); \d+ were refused or closed at once/);
    const listed = await browse(chatId, { action: 'tabs' });
    const tabs = unframed(listed.text).split('\n').filter((line) => /^\d+: /.test(line));
    expect(tabs.length).toBeLessThanOrEqual(10);
  });

  it('Scenario: WebSockets are refused and reported', async () => {
    const { text } = await browse('browser-socket', { action: 'navigate', url: `${pages.url}/socket` });
    expect(unframed(text)).toContain('Blocked request ws://127.0.0.1:9/feed: WebSockets are not available to the browser tool');
  });

  it('Scenario: JavaScript dialogs are dismissed and reported', async () => {
    const { text } = await browse('browser-dialog', { action: 'navigate', url: `${pages.url}/dialog` });
    expect(unframed(text)).toContain('JavaScript dialog dismissed: alert "Hello from the page"');
    expect(unframed(text)).toContain('after the dialog');
  });

  it('Scenario: an unknown ref is a clear error', async () => {
    const chatId = 'browser-ref';
    await browse(chatId, { action: 'navigate', url: `${pages.url}/next` });
    const { text } = await browse(chatId, { action: 'click', ref: 'e999' });
    expect(text).toMatch(/^Error: click failed: unknown ref e999/);
  });

  it('Scenario: downloads land in the workspace and executables are refused', async () => {
    const chatId = 'browser-download';
    const opened = await browse(chatId, { action: 'navigate', url: `${pages.url}/download-page` });
    const program = await browse(chatId, { action: 'click', ref: refOf(opened.text, 'link "Get the tool"') });
    expect(unframed(program.text)).toContain('Refused: download tool.bin: it is an executable program');
    expect(existsSync(join(t.config.workspaceDir, 'downloads', 'tool.bin'))).toBe(false);
    const notes = await browse(chatId, { action: 'click', ref: refOf(opened.text, 'link "Get notes"') });
    expect(unframed(notes.text)).toContain('downloaded downloads/notes.txt');
    const saved = join(t.config.workspaceDir, 'downloads', 'notes.txt');
    expect(await fs.readFile(saved, 'utf8')).toBe('plain notes\n');
    expect((await fs.stat(saved)).mode & 0o777).toBe(0o600);
  });

  it('Scenario: deleting a chat closes its browser context', async () => {
    const chatId = 'browser-delete';
    await browse(chatId, { action: 'navigate', url: `${pages.url}/next` });
    const service = t.app.get(BrowserService);
    expect(service.readySession(chatId)).not.toBeNull();
    await request(t.httpUrl).delete(`/api/sessions/${chatId}`).expect(204);
    await eventually(() => service.readySession(chatId) === null);
    expect(service.readySession(chatId)).toBeNull();
  });

  it("Scenario: close ends the chat's browser and the next call starts a fresh one", async () => {
    const chatId = 'browser-close';
    await browse(chatId, { action: 'navigate', url: `${pages.url}/next` });
    const closed = await browse(chatId, { action: 'close' });
    expect(closed.text).toContain("Closed this chat's browser");
    expect(t.app.get(BrowserService).readySession(chatId)).toBeNull();
    const tabs = await browse(chatId, { action: 'tabs' });
    expect(unframed(tabs.text)).toContain('No tabs are open');
  });

  it('Scenario: with CASHCODE_BROWSER_ENABLED=false the tool is not offered and the health endpoint says so', async () => {
    const off = await startTestApp({ env: { CASHCODE_BROWSER_ENABLED: 'false' } });
    try {
      const health = await request(off.httpUrl).get('/api/health').expect(200);
      expect(health.body.browser).toEqual({ enabled: false, sandboxed: expect.any(Boolean), allow_private: false, reason: 'CASHCODE_BROWSER_ENABLED=false' });
      expect(off.app.get(ToolRegistry).names()).not.toContain('browser');
    } finally {
      await off.close();
    }
  });

  describe('without the private-address setting', () => {
    let strict: TestApp;
    let ws: WsTestClient;
    beforeAll(async () => {
      strict = await startTestApp({
        // and without bubblewrap: Chromium runs unconfined, its requests still served through the guard; idle after 1 s
        env: { CASHCODE_BROWSER_TIMEOUT_MS: '3000', CASHCODE_EXEC_SANDBOX: 'off' },
        // `localhost` stands in for a public host; 127.0.0.1 and every other private address stay refused
        configOverrides: {
          browser: { ...loadBrowserConfig({ CASHCODE_BROWSER_TIMEOUT_MS: '3000', CASHCODE_BROWSER_IDLE_SEC: '1' }), trustedHosts: ['localhost'] },
        },
      });
      await configureFakeModel(strict.httpUrl, fake.baseUrl);
      ws = await WsTestClient.connect(strict.wsUrl);
    }, 60_000);
    afterAll(async () => {
      await ws?.close();
      await strict?.close();
    });

    it('Scenario: without bubblewrap the health endpoint says Chromium runs unconfined', async () => {
      const health = await request(strict.httpUrl).get('/api/health').expect(200);
      expect(health.body.browser).toMatchObject({ enabled: true, sandboxed: false, allow_private: false });
      const { text } = await browse('strict-public', { action: 'navigate', url: `${pages.url}/next` }, strict, ws);
      expect(unframed(text)).toContain('heading "The second page"');
    });

    it("Scenario: an idle chat's browser context is closed", async () => {
      const chatId = 'strict-idle';
      await browse(chatId, { action: 'navigate', url: `${pages.url}/next` }, strict, ws);
      const service = strict.app.get(BrowserService);
      expect(service.readySession(chatId)).not.toBeNull();
      await eventually(() => service.readySession(chatId) === null, 5000);
      expect(service.readySession(chatId)).toBeNull();
    });

    it('Scenario: a loopback page is refused', async () => {
      const { text } = await browse('strict-loopback', { action: 'navigate', url: pages.url.replace('localhost', '127.0.0.1') + '/' }, strict, ws);
      expect(text).toMatch(/^Error: navigate failed: refused http:\/\/127\.0\.0\.1:\d+\/: blocked address 127\.0\.0\.1 \(loopback\)/);
    });

    it("Scenario: a page's request to a loopback address is blocked and reported", async () => {
      const { text } = await browse('strict-embed', { action: 'navigate', url: `${pages.url}/embeds-loopback` }, strict, ws);
      expect(unframed(text)).toMatch(/Blocked request http:\/\/127\.0\.0\.1:\d+\/next: blocked address 127\.0\.0\.1 \(loopback\)/);
      expect(unframed(text)).toMatch(/- paragraph \[ref=e\d+\]: embeds/);
    });

    it('Scenario: a redirect to a loopback address is refused', async () => {
      const { text } = await browse('strict-redirect', { action: 'navigate', url: `${pages.url}/to-loopback` }, strict, ws);
      expect(text).toMatch(/^Error: navigate failed: refused http:\/\/127\.0\.0\.1:\d+\/next: blocked address 127\.0\.0\.1 \(loopback\)/);
    });
  });
});
