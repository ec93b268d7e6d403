/**
 * Standing rules match what the shell runs (openspec approvals "Requirement: Exec lines are read as dash reads them"
 * and "Requirement: Standing rules"): through real turns of the fake model, crafted lines that carry another command
 * past a rule for `ls`, or code through the options of an exactly allowed `git` command, are asked, and nothing runs
 * when the owner denies. A stored program-wide rule for a program outside the allowlist covers nothing and is flagged.
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const exec = (id: string, command: string) => ({ id, name: 'exec', arguments: JSON.stringify({ command }) });

describe('approvals: exec rules match what dash runs (e2e)', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let client: WsTestClient;
  let dataDir: string;

  beforeAll(async () => {
    // a policy file from before the allowlist: program-wide rules for git (can run code) and ls (cannot)
    dataDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-exec-rules-'));
    await fs.mkdir(join(dataDir, 'approvals'), { recursive: true, mode: 0o700 });
    await fs.writeFile(
      join(dataDir, 'approvals', 'tool-policies.json'),
      JSON.stringify({
        version: 1,
        rules: [
          { id: 'rule_00000000000000a1', scope: { kind: 'exec_program', program: 'git' }, created_at: '2026-01-01T00:00:00.000+00:00' },
          { id: 'rule_00000000000000a2', scope: { kind: 'exec_program', program: 'ls' }, created_at: '2026-01-01T00:00:00.000+00:00' },
        ],
      }),
      { mode: 0o600 },
    );
    fake = await FakeModelServer.start();
    t = await startTestApp({ dataDir });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });
  afterEach(async () => {
    await client?.close();
  });

  /** One exec call; the request (if any) is denied. Returns the turn's events. */
  async function runDenied(chatId: string, callId: string, line: string): Promise<ServerEvent[]> {
    fake.enqueue({ toolCalls: [exec(callId, line)] }, { content: 'ok' });
    const done = client.next('done', (e) => e.chat_id === chatId);
    const before = client.chatEvents(chatId).length;
    client.sendMessage(chatId, 'go');
    const requested = client.waitFor('approval_request', (e) => e.call_id === callId).catch(() => null);
    const asked = await Promise.race([requested, done.then(() => null)]);
    if (asked !== null) client.send({ type: 'approval', chat_id: chatId, call_id: callId, decision: 'deny' });
    await done;
    return client.chatEvents(chatId).slice(before);
  }

  it('Scenario: a stored program rule for a program that runs other code covers nothing and is flagged', async () => {
    const policies = await request(t.httpUrl).get('/api/settings/tool-policies').expect(200);
    const [git, ls] = policies.body.rules as Array<{ scope: unknown; inactive_reason?: string }>;
    expect(git?.scope).toEqual({ kind: 'exec_program', program: 'git' });
    expect(git?.inactive_reason).toMatch(/^git can run other programs or code through its options/);
    expect(ls?.inactive_reason).toBeUndefined();
    // the stored file is not rewritten by reading it
    const stored = JSON.parse(await fs.readFile(join(dataDir, 'approvals', 'tool-policies.json'), 'utf8'));
    expect(stored.rules[0]).not.toHaveProperty('inactive_reason');

    const events = await runDenied('rules-1', 'g1', "git -c alias.x='!id > ALIAS_RAN.txt' x");
    expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'g1', decision: 'deny', by: 'user' });
    expect(existsSync(join(t.config.workspaceDir, 'ALIAS_RAN.txt'))).toBe(false);
  });

  it('Scenario: after always allowing ls, crafted lines that carry another command are asked', async () => {
    // the rule works for plain ls lines
    const plain = await runDenied('rules-2', 'l0', 'ls -la 2>&1');
    expect(plain.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 'l0', decision: 'allow_once', by: 'policy' });
    const lines = [
      'ls #x; id > CRAFT_1.txt',
      'ls a#b; id > CRAFT_2.txt',
      "ls $'\\x3b' id > CRAFT_3.txt",
      'ls\\;id > CRAFT_4.txt',
      'ls ; id > CRAFT_5.txt',
      'ls >/dev/null;id>CRAFT_6.txt',
      'ls${IFS}id > CRAFT_7.txt',
      "l's' ; id > CRAFT_8.txt",
      'PATH=/usr/bin ls; id > CRAFT_9.txt',
      'ls &>/dev/null; id > CRAFT_10.txt',
    ];
    for (const [index, line] of lines.entries()) {
      const callId = `l${index + 1}`;
      const events = await runDenied(`rules-2-${index}`, callId, line);
      const resolved = events.find((e) => e.event === 'approval_resolved');
      expect({ line, resolved }).toMatchObject({ line, resolved: { call_id: callId, decision: 'deny', by: 'user' } });
    }
    for (let index = 1; index <= lines.length; index++) {
      expect(existsSync(join(t.config.workspaceDir, `CRAFT_${index}.txt`))).toBe(false);
    }
  });

  it('Scenario: an exact rule for git status does not cover git -c alias; denied, nothing runs', async () => {
    fake.enqueue({ toolCalls: [exec('s1', 'git status')] }, { content: 'ok' });
    const done = client.next('done', (e) => e.chat_id === 'rules-3');
    client.sendMessage('rules-3', 'status');
    const asked = await client.waitFor('approval_request', (e) => e.call_id === 's1');
    expect(asked.always_scope).toEqual({ kind: 'exec_command', argv: ['git', 'status'] });
    client.send({ type: 'approval', chat_id: 'rules-3', call_id: 's1', decision: 'allow_always' });
    await done;

    const again = await runDenied('rules-3', 's2', 'git status');
    expect(again.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: 's2', decision: 'allow_once', by: 'policy' });
    for (const [callId, line] of [
      ['s3', "git -c alias.x='!id > ALIAS_F.txt' x"],
      ['s4', "git status; git -c alias.x='!id > ALIAS_G.txt' x"],
      ['s5', 'git status --porcelain; id > ALIAS_H.txt'],
    ] as const) {
      const events = await runDenied('rules-3', callId, line);
      expect(events.find((e) => e.event === 'approval_resolved')).toMatchObject({ call_id: callId, decision: 'deny', by: 'user' });
    }
    for (const name of ['ALIAS_F.txt', 'ALIAS_G.txt', 'ALIAS_H.txt']) {
      expect(existsSync(join(t.config.workspaceDir, name))).toBe(false);
    }
  });
});
