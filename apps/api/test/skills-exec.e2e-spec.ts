/**
 * A loaded Skill's directory is available to exec (openspec skills, exec-sandbox, builtin-tools): read-only at
 * `/skills/<name>` in the real bwrap sandbox while the Skill is loaded in the chat, at its host path when the sandbox
 * is off; a Skill not loaded in the chat is refused as exec's cwd.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describeWithBwrap } from './support/bwrap';
import { FakeModelServer } from './support/fake-model-server';
import { buildZip, skillMd } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';
import { allowToolsWithoutAsking, configureFakeModel, putToolPolicies, WsTestClient } from './support/ws-client';

interface CompletionBody {
  messages: Array<{ role: string; content: string | null }>;
}

const HELLO = 'echo "hello from $(pwd)"\n';

async function treeHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const entry of (await fs.readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(d, entry.name);
      hash.update(`${rel}/${entry.name}\n`);
      if (entry.isDirectory()) await walk(full, `${rel}/${entry.name}`);
      else hash.update(await fs.readFile(full));
    }
  };
  await walk(dir, '');
  return hash.digest('hex');
}

describeWithBwrap('Skill directories for exec through real turns', () => {
  let fake: FakeModelServer;
  let sandboxed: TestApp;
  let unconfined: TestApp;
  let counter = 0;

  async function importSkill(t: TestApp, name: string): Promise<void> {
    const zip = await buildZip([
      { name: `${name}/SKILL.md`, data: skillMd(name, { description: 'Says hello', body: 'Run `sh scripts/hello.sh`.' }) },
      { name: `${name}/scripts/hello.sh`, data: HELLO, mode: 0o755 },
    ]);
    await request(t.httpUrl).post('/api/skills/import').attach('file', zip, `${name}.zip`).expect(201);
  }

  /** One turn: the fake model makes `calls` one after another; returns the tool messages it got back, in order. */
  async function turn(t: TestApp, calls: Array<{ name: string; args: Record<string, unknown> }>): Promise<string[]> {
    fake.reset();
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      const chatId = `skills-exec-${++counter}`;
      fake.enqueue(
        ...calls.map((call, i) => ({ toolCalls: [{ id: `c${i}`, name: call.name, arguments: JSON.stringify(call.args) }] })),
        { content: 'done' },
      );
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'go');
      await done;
      const body = fake.completions[calls.length]?.body as CompletionBody | undefined;
      return (body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content ?? '');
    } finally {
      await client.close();
    }
  }

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    sandboxed = await startTestApp({ env: { CASHCODE_EXEC_SANDBOX: 'bwrap' } });
    unconfined = await startTestApp({ env: { CASHCODE_EXEC_SANDBOX: 'off' } });
    for (const t of [sandboxed, unconfined]) {
      await configureFakeModel(t.httpUrl, fake.baseUrl);
      await allowToolsWithoutAsking(t.httpUrl);
      await importSkill(t, 'hello-skill');
      await importSkill(t, 'other-skill');
    }
  }, 120_000);

  afterAll(async () => {
    await sandboxed?.close();
    await unconfined?.close();
    await fake?.close();
  });

  it('Scenario: a loaded Skill\'s scripts run with exec at /skills/<name>, by full path and with that cwd', async () => {
    const results = await turn(sandboxed, [
      { name: 'skill_load', args: { name: 'hello-skill' } },
      { name: 'exec', args: { command: 'sh /skills/hello-skill/scripts/hello.sh' } },
      { name: 'exec', args: { command: 'sh scripts/hello.sh', cwd: '/skills/hello-skill' } },
      { name: 'exec', args: { command: 'pwd', cwd: '/skills/hello-skill/scripts' } },
    ]);
    expect(results[0]).toContain(
      'Base directory for this Skill: /skills/hello-skill (read-only; run its scripts with exec, e.g. cwd "/skills/hello-skill"',
    );
    expect(results[0]).toContain('Relative paths in the Skill are relative to it');
    expect(results[1]).toBe(`$ sh /skills/hello-skill/scripts/hello.sh\nExit code: 0\n\nhello from ${sandboxed.config.workspaceDir}\n`);
    expect(results[2]).toBe('Working directory: /skills/hello-skill\n$ sh scripts/hello.sh\nExit code: 0\n\nhello from /skills/hello-skill\n');
    expect(results[3]).toBe('Working directory: /skills/hello-skill/scripts\n$ pwd\nExit code: 0\n\n/skills/hello-skill/scripts\n');
  });

  it('Scenario: the Skill mount is read-only: writing there fails and the package is unchanged', async () => {
    const packageDir = join(sandboxed.config.skillsUserDir, 'hello-skill');
    const before = await treeHash(packageDir);
    const results = await turn(sandboxed, [
      { name: 'skill_load', args: { name: 'hello-skill' } },
      { name: 'exec', args: { command: 'touch /skills/hello-skill/x; echo tampered >> /skills/hello-skill/scripts/hello.sh' } },
      { name: 'exec', args: { command: 'touch x', cwd: '/skills/hello-skill' } },
      { name: 'exec', args: { command: 'touch from-skill.txt && ls from-skill.txt' } },
    ]);
    expect(results[1]).toMatch(/Exit code: [1-9]/);
    expect(results[1]).toMatch(/Read-only file system/);
    expect(results[2]).toMatch(/Exit code: [1-9]/);
    expect(results[2]).toMatch(/Read-only file system/);
    // writes still go to the workspace
    expect(results[3]).toBe('$ touch from-skill.txt && ls from-skill.txt\nExit code: 0\n\nfrom-skill.txt\n');
    expect(await treeHash(packageDir)).toBe(before);
    await expect(fs.stat(join(packageDir, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Scenario: a Skill not loaded in this chat, or a path outside the workspace, is refused as exec cwd', async () => {
    const results = await turn(sandboxed, [
      { name: 'skill_load', args: { name: 'hello-skill' } },
      { name: 'exec', args: { command: 'ls', cwd: '/skills/other-skill' } },
      { name: 'exec', args: { command: 'ls /skills' } },
      { name: 'exec', args: { command: 'ls', cwd: '/etc' } },
      { name: 'exec', args: { command: 'ls', cwd: '/skills/hello-skill/../other-skill' } },
    ]);
    expect(results[1]).toBe(
      'Error: cwd /skills/other-skill: the Skill other-skill is not loaded in this chat; a Skill\'s base directory is only ' +
        'available while that Skill is loaded in this chat (skill_load)',
    );
    expect(results[2]).toBe('$ ls /skills\nExit code: 0\n\nhello-skill\n');
    expect(results[3]).toMatch(/^Error: cwd \/etc is neither in the workspace nor the base directory of a Skill loaded in this chat/);
    expect(results[4]).toBe('Error: cwd /skills/hello-skill/../other-skill must not contain ..');
    // without skill_load in the chat nothing is mounted
    const unloaded = await turn(sandboxed, [{ name: 'exec', args: { command: 'sh scripts/hello.sh', cwd: '/skills/hello-skill' } }]);
    expect(unloaded[0]).toMatch(/^Error: cwd \/skills\/hello-skill: the Skill hello-skill is not loaded in this chat/);
  });

  it('Scenario: the exec approval request shows the cwd of a Skill directory', async () => {
    await putToolPolicies(sandboxed.httpUrl, { defaults: { exec: 'ask', mcp: 'allow' } });
    fake.reset();
    const client = await WsTestClient.connect(sandboxed.wsUrl);
    try {
      const chatId = `skills-exec-${++counter}`;
      fake.enqueue(
        { toolCalls: [{ id: 'a1', name: 'skill_load', arguments: '{"name":"hello-skill"}' }] },
        { toolCalls: [{ id: 'a2', name: 'exec', arguments: '{"command":"sh scripts/hello.sh","cwd":"/skills/hello-skill"}' }] },
        { content: 'done' },
      );
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.sendMessage(chatId, 'go');
      const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId);
      expect(asked).toMatchObject({ tool: 'exec', sandboxed: true, cwd: '/skills/hello-skill' });
      client.send({ type: 'approval', chat_id: chatId, call_id: asked.call_id, decision: 'allow_once' });
      await done;
      const body = fake.completions[2]?.body as CompletionBody | undefined;
      const result = body?.messages.filter((m) => m.role === 'tool').at(-1)?.content;
      expect(result).toBe('Working directory: /skills/hello-skill\n$ sh scripts/hello.sh\nExit code: 0\n\nhello from /skills/hello-skill\n');
    } finally {
      await client.close();
      await allowToolsWithoutAsking(sandboxed.httpUrl);
    }
  });

  it('Scenario: with the sandbox off, skill_load names the host path and exec runs there (read-only is not enforced)', async () => {
    const host = join(unconfined.config.skillsUserDir, 'hello-skill');
    const real = await fs.realpath(host);
    const results = await turn(unconfined, [
      { name: 'skill_load', args: { name: 'hello-skill' } },
      { name: 'exec', args: { command: 'sh scripts/hello.sh', cwd: real } },
      { name: 'exec', args: { command: 'pwd', cwd: '/skills/hello-skill' } },
    ]);
    expect(results[0]).toContain(`Base directory for this Skill: ${host} (read-only by convention: do not write there;`);
    expect(results[1]).toBe(`Working directory: ${real}\n$ sh scripts/hello.sh\nExit code: 0\n\nhello from ${real}\n`);
    expect(results[2]).toBe(`Working directory: ${real}\n$ pwd\nExit code: 0\n\n${real}\n`);
  });
});
