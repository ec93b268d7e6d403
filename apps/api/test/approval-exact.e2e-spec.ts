/**
 * The owner approves exactly what runs (openspec approvals "Requirement: The owner sees exactly what runs"): the
 * approval request carries the model's arguments byte for byte and, for exec, the separate commands of the line;
 * redaction stays in the audit file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalAuditEntry, ServerEvent } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

type EventOf<N extends ServerEvent['event']> = Extract<ServerEvent, { event: N }>;

async function auditEntries(t: TestApp): Promise<ApprovalAuditEntry[]> {
  const response = await fetch(`${t.httpUrl}/api/approvals/audit?limit=50`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { entries: ApprovalAuditEntry[] }).entries;
}

describe('approvals: the exact bytes (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterEach(async () => {
    await client?.close();
  });

  async function askAndDeny(chatId: string, callId: string): Promise<EventOf<'approval_request'>> {
    const done = client.next('done', (e) => e.chat_id === chatId);
    client.sendMessage(chatId, 'go');
    const asked = await client.waitFor('approval_request', (e) => e.call_id === callId);
    client.send({ type: 'approval', chat_id: chatId, call_id: callId, decision: 'deny' });
    await done;
    return asked;
  }

  it('Scenario: the card gets the exact command a redactor would have hidden', async () => {
    const line = `echo "password='" ; id > HIDDEN_RAN.txt ; echo "'"`;
    const raw = JSON.stringify({ command: line });
    fake.enqueue({ toolCalls: [{ id: 'x1', name: 'exec', arguments: raw }] }, { content: 'ok' });
    const asked = await askAndDeny('exact-1', 'x1');
    expect(asked.arguments).toBe(raw);
    expect(asked.command).toBe(line);
    expect(asked.unanalysed).toBeUndefined();
    expect(asked.commands?.map((c) => c.program)).toEqual(['echo', 'id', 'echo']);
    expect(asked.commands?.map((c) => line.slice(c.start, c.end))).toEqual([`echo "password='"`, 'id > HIDDEN_RAN.txt', `echo "'"`]);
    expect(existsSync(join(t.config.workspaceDir, 'HIDDEN_RAN.txt'))).toBe(false);
    const entry = (await auditEntries(t)).find((e) => e.call_id === 'x1');
    expect(entry?.decision).toBe('deny');
    expect(entry?.preview).toContain('[redacted]');
  });

  it('Scenario: long and secret-looking arguments reach the card whole', async () => {
    const put = await fetch(`${t.httpUrl}/api/settings/tool-policies`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tools: { write_file: 'ask' } }),
    });
    expect(put.status).toBe(200);
    try {
      const content = `api_key=sk-proj-${'A'.repeat(40)}\n${'lorem ipsum '.repeat(1700)}\u202Eend`;
      const raw = JSON.stringify({ path: 'notes.md', content });
      expect(raw.length).toBeGreaterThan(20_000);
      fake.enqueue({ toolCalls: [{ id: 'w1', name: 'write_file', arguments: raw }] }, { content: 'ok' });
      const asked = await askAndDeny('exact-2', 'w1');
      expect(asked.arguments).toBe(raw);
      expect(asked.command).toBeUndefined();
      const entry = (await auditEntries(t)).find((e) => e.call_id === 'w1');
      expect(entry?.preview.length).toBeLessThan(1000);
      expect(entry?.preview).not.toContain(`sk-proj-${'A'.repeat(40)}`);
      expect(existsSync(join(t.config.workspaceDir, 'notes.md'))).toBe(false);
    } finally {
      await fetch(`${t.httpUrl}/api/settings/tool-policies`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tools: {} }),
      });
    }
  });
});
