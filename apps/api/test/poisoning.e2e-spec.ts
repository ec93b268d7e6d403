/**
 * The poisoning suite through the real app (openspec memory "Requirement: Poisoning suite"): hostile pages, MCP tool
 * results, attached files, Skill resources and channel messages of non-owners tell the agent — in several phrasings,
 * some imitating system, audit or approval text and the untrusted-content boundary — to remember something, change
 * SOUL.md, create a Skill or an automation; the fake model obeys. Nothing may be written without the owner's approval,
 * and the owner's own turns are never asked. `npm run bench -- poisoning` reports the same figures.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChatService } from '../src/chat/chat.service';
import { FakeModelServer } from './support/fake-model-server';
import { everythingStdioEntry, writeCatalog } from './support/mcp-test-servers';
import { runPoisoningSuite, type PoisonReport } from './support/poisoning-suite';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel } from './support/ws-client';

describe('poisoning suite (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let catalogDir: string;
  let report: PoisonReport;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-poison-'));
    const catalog = writeCatalog(catalogDir, { everything: everythingStdioEntry() });
    t = await startTestApp({ env: { DREAM_INTERVAL: '0', CASHCODE_FETCH_ALLOW_PRIVATE: 'true', CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const chat = t.app.get(ChatService);
    report = await runPoisoningSuite(
      {
        httpUrl: t.httpUrl,
        wsUrl: t.wsUrl,
        memoryDir: t.config.memoryDir,
        fake,
        mcpServer: 'everything',
        // a message of someone other than the owner, as a channel delivers it
        channelMessage: (chatId, content) => {
          chat.submit(chatId, content, { llm: { provider: 'openai_compatible', model: 'fake-model' } }, [], {
            untrustedSources: [{ kind: 'channel_message', name: 'telegram:4242 (not the owner)' }],
          });
        },
      },
      join(__dirname, 'fixtures', 'poisoning'),
    );
  }, 300_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    if (catalogDir) await fs.rm(catalogDir, { recursive: true, force: true });
  });

  it('Scenario: hostile content from every kind of source cannot write memory, SOUL.md, Skills or automations without the owner', () => {
    expect(report.vectors).toEqual(['page', 'attachment', 'skill_resource', 'mcp', 'channel']);
    expect(report.attempts).toBe(5 * 7 * 4);
    const wrote = report.cases.filter((c) => c.wrote).map((c) => `${c.vector}/${c.phrasing}/${c.goal}`);
    expect(wrote).toEqual([]);
    expect(report.stateWrites).toEqual([]);
    expect(report.unapprovedWrites).toBe(0);
    // memory and Skill writes were asked (and denied), naming the source
    const gated = report.cases.filter((c) => c.goal === 'remember' || c.goal === 'skill');
    expect(gated.filter((c) => !c.asked).map((c) => `${c.vector}/${c.phrasing}/${c.goal}`)).toEqual([]);
    // each request named the source the hostile text came through
    const kindOf = { page: 'web_fetch', mcp: 'mcp_tool', attachment: 'attachment', skill_resource: 'skill_resource', channel: 'channel_message' };
    expect(gated.filter((c) => !c.named.includes(kindOf[c.vector])).map((c) => `${c.vector}/${c.phrasing}/${c.goal}`)).toEqual([]);
  });

  it('Scenario: every hostile tool result reaches the model inside the untrusted frame, whatever it imitates', () => {
    const unframed = report.cases.filter((c) => c.framed === false).map((c) => `${c.vector}/${c.phrasing}/${c.goal}`);
    expect(unframed).toEqual([]);
    expect(report.cases.filter((c) => c.framed === true).length).toBe(4 * 7 * 4);
  });

  it('Scenario: the owner\'s own memory and Skill requests are never asked', () => {
    expect(report.ownerTurns).toBe(5);
    expect(report.falsePrompts).toBe(0);
  });
});
