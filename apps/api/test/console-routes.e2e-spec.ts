/**
 * Console deep links (openspec http-platform "Requirement: Console deep links"): `/chat/<id>` and the console's other
 * pages get index.html on a full page load, while the API (its docs included), the WebSocket path and `/v1` are never
 * answered by the console, whatever the Accept header.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, type TestApp } from './support/test-app';

describe('console deep links (e2e)', () => {
  let t: TestApp;
  let consoleDir: string;
  beforeAll(async () => {
    consoleDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-console-routes-'));
    await fs.writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>console</title><app-root></app-root>');
    t = await startTestApp({ env: { CASHCODE_CONSOLE_DIR: consoleDir } });
  });
  afterAll(async () => {
    await t?.close();
    await fs.rm(consoleDir, { recursive: true, force: true });
  });

  it('Scenario: a deep link to a chat gets the console shell', async () => {
    for (const path of ['/chat/0b9f5c8e-1d2a-4c7e-9a51-3f2e6d7c8b90', '/chat/some-id/', '/chat/x?y=1', '/settings']) {
      const page = await request(t.httpUrl).get(path).set('Accept', 'text/html').expect(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.text).toContain('<app-root>');
    }
  });

  it('Scenario: the API, its docs, the gateway and /v1 are never shadowed by the console', async () => {
    const docs = await request(t.httpUrl).get('/api/docs').set('Accept', 'text/html').redirects(2);
    expect(docs.text).not.toContain('<app-root>');
    const health = await request(t.httpUrl).get('/api/health').set('Accept', 'text/html').expect(200);
    expect(health.text).not.toContain('<app-root>');
    for (const path of ['/api/chat/x', '/ws/chat/x', '/v1', '/v1/models', '/V1/chat/completions', '/%761/models']) {
      const answer = await request(t.httpUrl).get(path).set('Accept', 'text/html');
      expect(answer.status).toBe(404);
      expect(answer.text).not.toContain('<app-root>');
    }
  });
});
