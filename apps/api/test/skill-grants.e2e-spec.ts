/**
 * Nothing the model can write raises what it may do (openspec approvals "Requirement: Skills pre-approve only with the
 * owner's grant", skills "Requirement: Pre-approval grants"): a Skill's `allowed-tools` pre-approve only while the
 * owner's grant names the package's exact content. Real turns over the WebSocket and `/v1` (the `openai` SDK) with
 * the fake model, real Skill packages on disk, REST for the owner's grant.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import request from 'supertest';
import type { ServerEvent, SkillPreApprovals } from '@cashcode/contracts';
import { EVOLUTION_SKILLS, type EvolutionSkillsPort } from '../src/evolution/evolution-skills.port';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { buildZip, skillMd } from './support/skill-fixtures';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  messages: Array<{ role: string; content: string | null }>;
}

const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;
const toolMessages = (r: RecordedRequest | undefined): string[] =>
  bodyOf(r).messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
const call = (id: string, name: string, args: Record<string, unknown>) => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

describe('Skill pre-approvals need the owner\'s grant (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let counter = 0;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterAll(async () => {
    await client?.close();
    await t?.close();
    await fake?.close();
  });

  beforeEach(() => fake.reset());

  /**
   * One turn in a new chat: the model makes `steps` (one call each), then answers. An approval request is answered
   * with `decision`; resolves with the chat's events.
   */
  async function turn(steps: ReturnType<typeof call>[], decision: 'deny' | 'allow_once' = 'deny'): Promise<ServerEvent[]> {
    const chatId = `grants-${++counter}`;
    fake.enqueue(...steps, { content: 'done' });
    const done = client.next('done', (e) => e.chat_id === chatId, 30_000);
    const answered = (async () => {
      for (;;) {
        const asked = await client.next('approval_request', (e) => e.chat_id === chatId, 30_000).catch(() => null);
        if (asked === null) return;
        client.send({ type: 'approval', chat_id: chatId, call_id: asked.call_id, decision });
      }
    })();
    client.sendMessage(chatId, 'go');
    await done;
    void answered;
    return client.chatEvents(chatId);
  }

  const resolvedOf = (events: ServerEvent[], callId: string) =>
    events.find((e) => e.event === 'approval_resolved' && e.call_id === callId) as { decision: string; by: string } | undefined;
  const requested = (events: ServerEvent[]) =>
    events.filter((e) => e.event === 'approval_request').map((e) => (e as { call_id: string }).call_id);

  async function preApprovals(name: string): Promise<SkillPreApprovals> {
    const detail = await request(t.httpUrl).get(`/api/skills/${name}`).expect(200);
    return detail.body.pre_approvals as SkillPreApprovals;
  }

  async function importSkill(name: string, allowed: string, script = 'echo hi\n'): Promise<SkillPreApprovals> {
    const zip = await buildZip([
      { name: `${name}/SKILL.md`, data: skillMd(name, { extra: `allowed-tools: ${allowed}` }) },
      { name: `${name}/scripts/run.sh`, data: script },
    ]);
    const imported = await request(t.httpUrl).post('/api/skills/import').attach('file', zip, `${name}.zip`).expect(201);
    return imported.body.pre_approvals as SkillPreApprovals;
  }

  it('Scenario: a Skill the agent writes with allowed-tools Bash pre-approves nothing: its exec asks the user', async () => {
    const marker = join(t.config.workspaceDir, 'AGENT_SKILL_RAN.txt');
    const events = await turn([
      call('m1', 'agent_skill_manage', {
        action: 'create',
        name: 'self-grant',
        content: skillMd('self-grant', { extra: 'allowed-tools: Bash', body: 'Run anything.' }),
      }),
      call('m2', 'skill_load', { name: 'self-grant' }),
      call('m3', 'exec', { command: 'id > AGENT_SKILL_RAN.txt; whoami' }),
    ]);
    expect(requested(events)).toEqual(['m3']);
    expect(resolvedOf(events, 'm3')).toMatchObject({ decision: 'deny', by: 'user' });
    await expect(fs.stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
    // the model is not told the Skill pre-approves anything
    const loaded = toolMessages(fake.completions[2])[1] ?? '';
    expect(loaded).toContain('[Skill loaded: self-grant@v1');
    expect(loaded).not.toContain('Pre-approved while this Skill is loaded');
    expect(loaded).toContain('Not pre-approved');
    // the owner sees what it asks for, not granted
    const pre = await preApprovals('self-grant');
    expect(pre).toMatchObject({ requested: ['Bash'], granted: false, broad: true });
    expect(pre.summary).toEqual([expect.objectContaining({ entry: 'Bash', kind: 'any_command', text: 'any shell command' })]);
    expect(pre.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('Scenario: over /v1 a Skill the agent writes pre-approves nothing: its exec is denied headless', async () => {
    await request(t.httpUrl)
      .put('/api/settings/openai-compat')
      .send({ enabled: true, default_model: { provider: 'openai_compatible', model: 'fake-model' } })
      .expect(200);
    const key = await request(t.httpUrl).post('/api/settings/openai-compat/keys').send({ name: 'grants' }).expect(201);
    const openai = new OpenAI({ baseURL: `${t.httpUrl}/v1`, apiKey: key.body.secret as string, maxRetries: 0 });
    fake.enqueue(
      call('v1', 'agent_skill_manage', {
        action: 'create',
        name: 'headless-grant',
        content: skillMd('headless-grant', { extra: 'allowed-tools: Bash' }),
      }),
      call('v2', 'skill_load', { name: 'headless-grant' }),
      call('v3', 'exec', { command: 'id > V1_SKILL_RAN.txt; whoami' }),
      { content: 'could not' },
    );
    const completion = await openai.chat.completions.create({ model: 'cashcode', messages: [{ role: 'user', content: 'go' }] });
    expect(completion.choices[0]?.message.content).toBe('could not');
    const results = toolMessages(fake.completions[3]);
    expect(results[2]).toContain('needs approval; headless clients (the OpenAI-compatible API) cannot approve');
    await expect(fs.stat(join(t.config.workspaceDir, 'V1_SKILL_RAN.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    const audit = await request(t.httpUrl).get('/api/approvals/audit').expect(200);
    expect(audit.body.entries[0]).toMatchObject({ tool: 'exec', decision: 'deny', by: 'policy' });
  });

  it('Scenario: the owner grants an imported Skill\'s pre-approvals with its hash; a change drops the grant', async () => {
    const shown = await importSkill('granted-tool', 'Bash(cat scripts/run.sh)');
    expect(shown).toMatchObject({ requested: ['Bash(cat scripts/run.sh)'], granted: false, broad: false });
    expect(shown.summary[0]).toMatchObject({ kind: 'exact_command', value: 'cat scripts/run.sh' });
    const load = call('g1', 'skill_load', { name: 'granted-tool' });
    const run = call('g2', 'exec', { command: 'cat scripts/run.sh', cwd: '/skills/granted-tool' });

    // not granted yet: the exec asks
    expect(requested(await turn([load, run]))).toEqual(['g2']);

    const granted = await request(t.httpUrl).post('/api/skills/granted-tool/pre-approvals').send({ hash: shown.hash }).expect(200);
    expect(granted.body).toMatchObject({ granted: true, hash: shown.hash });
    expect((await preApprovals('granted-tool')).granted).toBe(true);
    const byPolicy = await turn([load, run]);
    expect(requested(byPolicy)).toEqual([]);
    expect(resolvedOf(byPolicy, 'g2')).toMatchObject({ decision: 'allow_once', by: 'policy' });
    expect(toolMessages(fake.completions.at(-1))[0]).toContain('Pre-approved while this Skill is loaded');
    const audit = await request(t.httpUrl).get('/api/approvals/audit').expect(200);
    expect(audit.body.entries.find((e: { tool: string }) => e.tool === 'skill_pre_approvals')).toMatchObject({
      decision: 'allow_always',
      by: 'user',
      skill_grant: { action: 'grant', name: 'granted-tool', source: 'user', hash: shown.hash, allowed_tools: ['Bash(cat scripts/run.sh)'] },
    });

    // the console editor saves a new SKILL.md: the grant is gone and the exec asks again
    const content = await request(t.httpUrl).get('/api/skills/granted-tool/content').expect(200);
    const saved = await request(t.httpUrl)
      .put('/api/skills/granted-tool')
      .send({ content: `${content.body.content as string}\nEdited.\n`, expected_hash: content.body.hash })
      .expect(200);
    expect(saved.body.pre_approvals).toMatchObject({ granted: false });
    expect(saved.body.pre_approvals.hash).not.toBe(shown.hash);
    expect(requested(await turn([load, run]))).toEqual(['g2']);
    const dropped = (await request(t.httpUrl).get('/api/approvals/audit').expect(200)).body.entries[1];
    expect(dropped).toMatchObject({ tool: 'skill_pre_approvals', decision: 'deny', by: 'policy', skill_grant: { action: 'revoke', reason: 'changed' } });
  });

  it('Scenario: a grant with a hash that is not the current content is 409; revoking ends the pre-approvals', async () => {
    const shown = await importSkill('stale-grant', 'Bash(git status:*) Read mcp__files');
    expect(shown.summary.map((item) => item.kind)).toEqual(['command_prefix', 'tool', 'mcp_server']);
    const stale = await request(t.httpUrl)
      .post('/api/skills/stale-grant/pre-approvals')
      .send({ hash: 'a'.repeat(64) })
      .expect(409);
    expect(stale.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(stale.body).toMatchObject({ code: 'skill_grant_stale', hash: shown.hash });
    expect(stale.body.detail).toContain('changed since its pre-approvals were shown');
    const bad = await request(t.httpUrl).post('/api/skills/stale-grant/pre-approvals').send({ hash: 'nope' }).expect(422);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    await request(t.httpUrl).post('/api/skills/missing-skill/pre-approvals').send({ hash: shown.hash }).expect(404);
    await request(t.httpUrl).post('/api/skills').send({ name: 'no-tools', content: skillMd('no-tools') }).expect(201);
    const nothing = await request(t.httpUrl).post('/api/skills/no-tools/pre-approvals').send({ hash: shown.hash }).expect(422);
    expect(nothing.body.detail).toContain('lists no allowed-tools');

    await request(t.httpUrl).post('/api/skills/stale-grant/pre-approvals').send({ hash: shown.hash }).expect(200);
    const load = call('s1', 'skill_load', { name: 'stale-grant' });
    const git = call('s2', 'exec', { command: 'git status' });
    expect(requested(await turn([load, git]))).toEqual([]);
    await request(t.httpUrl).delete('/api/skills/stale-grant/pre-approvals').expect(204);
    expect((await preApprovals('stale-grant')).granted).toBe(false);
    expect(requested(await turn([load, git]))).toEqual(['s2']);
    const revoked = (await request(t.httpUrl).get('/api/approvals/audit').expect(200)).body.entries;
    expect(revoked.some((e: { skill_grant?: { action: string; reason?: string } }) => e.skill_grant?.action === 'revoke' && e.skill_grant.reason === 'owner')).toBe(true);
    const grants = JSON.parse(await fs.readFile(join(t.dataDir, 'approvals', 'skill-grants.json'), 'utf8'));
    expect(grants.grants.map((g: { name: string }) => g.name)).not.toContain('stale-grant');
    expect((await fs.stat(join(t.dataDir, 'approvals', 'skill-grants.json'))).mode & 0o777).toBe(0o600);
  });

  it('Scenario: a Skill evolution creates or changes has no grant', async () => {
    const evolution = t.app.get<EvolutionSkillsPort>(EVOLUTION_SKILLS);
    await evolution.createAgentSkill('evolved', skillMd('evolved', { extra: 'allowed-tools: Bash(npm test)' }), 'recurring workflow');
    const created = await preApprovals('evolved');
    expect(created).toMatchObject({ requested: ['Bash(npm test)'], granted: false });
    await request(t.httpUrl).post('/api/skills/evolved/pre-approvals').send({ hash: created.hash }).expect(200);
    const current = await evolution.find('evolved');
    await evolution.replaceAgentSkill('evolved', skillMd('evolved', { extra: 'allowed-tools: Bash(npm test)', body: 'v2' }), current!.hash);
    expect((await preApprovals('evolved')).granted).toBe(false);
    const grants = JSON.parse(await fs.readFile(join(t.dataDir, 'approvals', 'skill-grants.json'), 'utf8'));
    expect(grants.grants.map((g: { name: string }) => g.name)).not.toContain('evolved');
  });

  it('Scenario: a change of a supporting file on disk ends the pre-approvals of a loaded, granted Skill', async () => {
    const shown = await importSkill('script-swap', 'Bash(cat scripts/run.sh)');
    await request(t.httpUrl).post('/api/skills/script-swap/pre-approvals').send({ hash: shown.hash }).expect(200);
    // the script changes behind the server's back: the package hash moves, so the grant no longer applies
    await fs.writeFile(join(t.config.skillsUserDir, 'script-swap', 'scripts', 'run.sh'), 'id > SWAPPED.txt\n');
    const events = await turn([call('w1', 'skill_load', { name: 'script-swap' }), call('w2', 'exec', { command: 'cat scripts/run.sh' })]);
    expect(requested(events)).toEqual(['w2']);
    const now = await preApprovals('script-swap');
    expect(now.granted).toBe(false);
    expect(now.hash).not.toBe(shown.hash);
  });
});
