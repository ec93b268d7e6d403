/**
 * Skill self-evolution end to end (openspec skill-evolution): real turns over the WebSocket with the fake model,
 * evidence files on disk, the restricted evolver's request, proposals through REST, approval into the Skills catalog.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter2 } from '@nestjs/event-emitter';
import request from 'supertest';
import type {
  SkillEvolutionEvidence,
  SkillEvolutionProposal,
  SkillEvolutionProposalDetail,
  SkillEvolutionProposalList,
} from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { SKILL_EVOLUTION_EVALUATED_EVENT, type EvaluationFinishedEvent } from '../src/events/app-events';
import { EVOLVER_SYSTEM_PROMPT, FALLBACK_CONTRACT } from '../src/evolution/evolver';
import { FakeModelServer, type FakeStep, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface CompletionBody {
  model: string;
  stream?: boolean;
  tools?: unknown[];
  messages: Array<{ role: string; content: string | null }>;
}

const FAKE_API_KEY = 'sk-test-fake-key-0123456789';
const bodyOf = (r: RecordedRequest): CompletionBody => r.body as CompletionBody;
const isEvolverRequest = (r: RecordedRequest) => bodyOf(r).messages[0]?.content === EVOLVER_SYSTEM_PROMPT;

function skillMd(name: string, body = '# Steps\n1. Read the log.\n2. Summarise it.\n', description = 'Build the weekly report'): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}`;
}

function testTool(name: string, result: string | { model: string; ok: boolean }): AgentTool {
  return {
    name,
    description: `test tool ${name}`,
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
    readOnly: false,
    execute: async () => result,
  };
}

/** Resolves with the next evaluation of the chat's turn (subscribe before the turn starts). */
function nextEvaluation(t: TestApp, chatId: string): Promise<EvaluationFinishedEvent> {
  const events = t.app.get(EventEmitter2);
  return new Promise((resolve) => {
    const listener = (event: EvaluationFinishedEvent) => {
      if (event.chatId !== chatId) return;
      events.off(SKILL_EVOLUTION_EVALUATED_EVENT, listener);
      resolve(event);
    };
    events.on(SKILL_EVOLUTION_EVALUATED_EVENT, listener);
  });
}

async function evidenceFiles(t: TestApp): Promise<SkillEvolutionEvidence[]> {
  const dir = join(t.dataDir, 'skill-evolution', 'evidence');
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return Promise.all(
    names.sort().map(async (name) => JSON.parse(await fs.readFile(join(dir, name), 'utf8')) as SkillEvolutionEvidence),
  );
}

describe('skill evolution (e2e)', () => {
  let fake: FakeModelServer;
  /** evolver answers, consumed in order (turns use the fake's queue) */
  let evolverSteps: FakeStep[];
  let chatCounter = 0;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
  });

  afterAll(async () => {
    await fake.close();
  });

  beforeEach(() => {
    fake.reset();
    evolverSteps = [];
    fake.setHandler((r) => (isEvolverRequest(r) ? (evolverSteps.shift() ?? { content: 'no proposal' }) : undefined));
  });

  async function start(env: Record<string, string> = {}): Promise<TestApp> {
    const t = await startTestApp({ env: { DREAM_INTERVAL: '0', CASHCODE_MAX_ITERATIONS: '3', ...env } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const registry = t.app.get(ToolRegistry);
    registry.register(testTool('collect_data', 'rows: 42'));
    registry.register(testTool('render_report', `report written (key ${FAKE_API_KEY})`));
    registry.register(testTool('broken_tool', { model: 'Error: the source is unavailable', ok: false }));
    return t;
  }

  /** One turn: the model calls `tools` (one assistant message), then answers; resolves with its evaluation. */
  async function turn(t: TestApp, content: string, tools: string[], answer = 'The report is ready.'): Promise<EvaluationFinishedEvent> {
    const chatId = `evo-${++chatCounter}`;
    fake.enqueue(
      { toolCalls: tools.map((name) => ({ name, arguments: JSON.stringify({ text: 'week', password: 'hunter2' }) })) },
      { content: answer },
    );
    const evaluated = nextEvaluation(t, chatId);
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      client.sendMessage(chatId, content);
      await client.next('done');
    } finally {
      await client.close();
    }
    return evaluated;
  }

  const evolverRequests = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions') && isEvolverRequest(r));

  describe('disabled (the default)', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ env: { DREAM_INTERVAL: '0' } });
      await configureFakeModel(t.httpUrl, fake.baseUrl);
      const registry = t.app.get(ToolRegistry);
      registry.register(testTool('collect_data', 'rows: 42'));
      registry.register(testTool('render_report', 'ok'));
    });

    afterAll(async () => {
      await t.close();
    });

    it('Scenario: evolution is off unless SKILL_EVOLUTION_ENABLED is true', async () => {
      expect(t.config.skillEvolutionEnabled).toBe(false);
      for (const week of [1, 2]) {
        const evaluation = await turn(t, `Build the weekly report for week ${week}`, ['collect_data', 'render_report']);
        expect(evaluation).toMatchObject({ outcome: 'skipped', reason: 'disabled' });
      }
      expect(await evidenceFiles(t)).toEqual([]);
      expect(evolverRequests()).toHaveLength(0);
      const list = await request(t.httpUrl).get('/api/skill-evolution/proposals').expect(200);
      expect(list.body).toEqual({ enabled: false, items: [] });
    });
  });

  describe('enabled', () => {
    let t: TestApp;

    beforeEach(async () => {
      t = await start({ SKILL_EVOLUTION_ENABLED: 'true' });
    });

    afterEach(async () => {
      await t.close();
    });

    it('Scenario: a turn with fewer tool calls than SKILL_EVOLUTION_MIN_TOOL_CALLS is not evidence', async () => {
      expect(await turn(t, 'Build the weekly report', ['collect_data'])).toMatchObject({
        outcome: 'skipped',
        reason: 'insufficient_tool_calls',
      });
      expect(await evidenceFiles(t)).toEqual([]);
    });

    it('Scenario: a turn with a failed tool call is not evidence', async () => {
      expect(await turn(t, 'Build the weekly report', ['collect_data', 'broken_tool'])).toMatchObject({
        outcome: 'skipped',
        reason: 'failed_tool_call',
      });
      expect(await evidenceFiles(t)).toEqual([]);
    });

    it('Scenario: a turn that hit the iteration limit is not evidence', async () => {
      const chatId = 'evo-loop';
      // different arguments each round: an iteration limit, not a loop the runaway guard would stop first
      const call = (week: number) => ({
        toolCalls: [
          { name: 'collect_data', arguments: JSON.stringify({ week }) },
          { name: 'render_report', arguments: JSON.stringify({ week }) },
        ],
      });
      fake.enqueue(call(1), call(2), call(3), { content: 'best effort' });
      const evaluated = nextEvaluation(t, chatId);
      const client = await WsTestClient.connect(t.wsUrl);
      client.sendMessage(chatId, 'Build the weekly report');
      await client.next('done');
      await client.close();
      expect(await evaluated).toMatchObject({ outcome: 'skipped', reason: 'iteration_limit_reached' });
      expect(await evidenceFiles(t)).toEqual([]);
    });

    it('Scenario: a turn the runaway guard stopped is not evidence', async () => {
      const chatId = 'evo-runaway';
      const call = { toolCalls: [{ name: 'collect_data', arguments: '{}' }, { name: 'render_report', arguments: '{}' }] };
      fake.enqueue(call, call, call, { content: 'best effort' });
      const evaluated = nextEvaluation(t, chatId);
      const client = await WsTestClient.connect(t.wsUrl);
      client.sendMessage(chatId, 'Build the weekly report');
      await client.next('done');
      await client.close();
      expect(await evaluated).toMatchObject({ outcome: 'skipped', reason: 'runaway_stopped' });
      expect(await evidenceFiles(t)).toEqual([]);
    });

    it('Scenario: a failed turn is not evidence', async () => {
      fake.enqueue({ status: 400, errorBody: { error: { message: 'bad request', type: 'invalid_request_error' } } });
      const client = await WsTestClient.connect(t.wsUrl);
      client.sendMessage('evo-failed', 'Build the weekly report');
      await client.next('error');
      await client.close();
      // a later successful turn is evaluated; the failed one left nothing behind
      expect(await turn(t, 'Build the weekly report', ['collect_data', 'render_report'])).toMatchObject({
        outcome: 'recorded',
      });
      expect(await evidenceFiles(t)).toHaveLength(1);
    });

    it('Scenario: evidence is redacted, bounded and keyed by the workflow fingerprint', async () => {
      const first = await turn(t, `Build the weekly report for week 12 password=hunter2 ${FAKE_API_KEY}`, [
        'collect_data',
        'render_report',
      ]);
      expect(first).toMatchObject({ outcome: 'recorded', reason: 'not_recurring' });
      const [evidence] = await evidenceFiles(t);
      expect(evidence).toBeDefined();
      expect(evidence?.id).toBe(first.evidenceId);
      expect(evidence?.fingerprint).toBe(first.fingerprint);
      expect(evidence?.tools).toEqual(['collect_data', 'render_report']);
      expect(evidence?.chat_id_hash).toMatch(/^[0-9a-f]{12}$/);
      const text = JSON.stringify(evidence);
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain(FAKE_API_KEY);
      expect(text).not.toContain('evo-');
      expect(evidence?.tool_receipts).toEqual(['rows: 42', expect.stringContaining('report written')]);
    });

    it('Scenario: a recurring workflow produces one proposal, and no duplicate while it is pending', async () => {
      evolverSteps.push({
        content: JSON.stringify({
          action: 'create',
          name: 'weekly-report',
          candidate_content: skillMd('weekly-report'),
          reason: 'The weekly report recurs',
        }),
      });
      const tools = ['collect_data', 'render_report'];
      const first = await turn(t, 'Build the weekly report for week 12', tools);
      const second = await turn(t, 'build the  weekly report for week 13', tools);
      expect(first.outcome).toBe('recorded');
      expect(second).toMatchObject({ outcome: 'proposed', fingerprint: first.fingerprint });

      // the restricted evolver: no tools, not streamed, the turn's model, contract + summaries + evidence + rules
      const [call] = evolverRequests();
      const body = bodyOf(call as RecordedRequest);
      expect(body.tools).toBeUndefined();
      expect(body.stream).not.toBe(true);
      expect(body.model).toBe('fake-model');
      expect(body.messages).toHaveLength(2);
      const payload = JSON.parse(body.messages[1]?.content ?? '') as {
        contract: string;
        existing_skills: Array<{ name: string }>;
        evidence: Array<{ user: string }>;
      };
      expect(payload.contract.length).toBeGreaterThan(100);
      expect(payload.contract).not.toBe(FALLBACK_CONTRACT);
      expect(payload.existing_skills.map((s) => s.name)).toContain('skill-creator');
      expect(payload.evidence.map((e) => e.user)).toEqual([
        'Build the weekly report for week 12',
        'build the  weekly report for week 13',
      ]);
      expect((body.messages[1]?.content ?? '').length).toBeLessThanOrEqual(t.config.skillEvolutionMaxContextChars);

      const list = (await request(t.httpUrl).get('/api/skill-evolution/proposals').expect(200)).body as SkillEvolutionProposalList;
      expect(list.enabled).toBe(true);
      expect(list.items).toHaveLength(1);
      const proposal = list.items[0] as SkillEvolutionProposal;
      expect(proposal).toMatchObject({
        id: second.proposalId,
        action: 'create',
        name: 'weekly-report',
        status: 'pending',
        reason: 'The weekly report recurs',
        base_hash: null,
        validation: { valid: true, errors: [] },
        applied_version: null,
        fingerprint: first.fingerprint,
        evidence_ids: [first.evidenceId, second.evidenceId],
        model: { provider: 'openai_compatible', model: 'fake-model' },
      });
      const file = JSON.parse(
        await fs.readFile(join(t.dataDir, 'skill-evolution', 'proposals', `${proposal.id}.json`), 'utf8'),
      ) as SkillEvolutionProposal;
      expect(file).toEqual(proposal);

      // the same workflow again: evidence only, no second model call, no second proposal
      const third = await turn(t, 'Build the weekly report for week 14', tools);
      expect(third).toMatchObject({ outcome: 'recorded', reason: 'proposal_exists' });
      expect(evolverRequests()).toHaveLength(1);
      const after = (await request(t.httpUrl).get('/api/skill-evolution/proposals').expect(200)).body as SkillEvolutionProposalList;
      expect(after.items).toHaveLength(1);

      // nothing was applied automatically
      await request(t.httpUrl).get('/api/skills/weekly-report').expect(404);
    });

    it('Scenario: approving a create proposal creates an agent Skill visible in the catalog', async () => {
      const proposal = await proposeVia(t, { action: 'create', name: 'weekly-report', candidate_content: skillMd('weekly-report') });
      const detail = (await request(t.httpUrl).get(`/api/skill-evolution/proposals/${proposal.id}`).expect(200))
        .body as SkillEvolutionProposalDetail;
      expect(detail.evidence.map((e) => e.id)).toEqual(proposal.evidence_ids);
      expect(detail.current).toBeNull();
      expect(detail.diff).toBeNull();
      expect(detail.stale).toBe(false);

      const approved = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/approve`).expect(200);
      expect(approved.body).toMatchObject({ id: proposal.id, status: 'applied', applied_version: '1' });
      expect(approved.body.updated_at >= proposal.updated_at).toBe(true);

      const skill = await request(t.httpUrl).get('/api/skills/weekly-report').expect(200);
      expect(skill.body).toMatchObject({ name: 'weekly-report', source: 'agent', enabled: true });
      const listed = await request(t.httpUrl).get('/api/skills').query({ source: 'agent' }).expect(200);
      expect(listed.body.items.map((s: { name: string }) => s.name)).toEqual(['weekly-report']);

      const again = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/approve`).expect(409);
      expect(again.headers['content-type']).toContain('application/problem+json');
      expect(again.body).toMatchObject({ status: 409, detail: 'proposal is not pending' });
      await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/reject`).expect(409);
    });

    it('Scenario: an update proposal with a stale base hash is refused with 409, a fresh one applies after a snapshot', async () => {
      await request(t.httpUrl)
        .post('/api/skills')
        .send({ name: 'weekly-report', content: skillMd('weekly-report'), source: 'agent' })
        .expect(201);
      const stale = await proposeVia(t, {
        action: 'update',
        name: 'weekly-report',
        candidate_content: skillMd('weekly-report', '# Steps\n1. Read the log.\n2. Chart it.\n'),
      });
      const before = await request(t.httpUrl).get('/api/skills/weekly-report/content').expect(200);
      expect(stale.base_hash).toBe(before.body.hash);

      // someone edits the Skill after the proposal was made
      await request(t.httpUrl)
        .put('/api/skills/weekly-report')
        .send({ content: skillMd('weekly-report', '# Steps\nEdited by hand.\n'), expected_hash: before.body.hash })
        .expect(200);
      const detail = (await request(t.httpUrl).get(`/api/skill-evolution/proposals/${stale.id}`).expect(200))
        .body as SkillEvolutionProposalDetail;
      expect(detail.stale).toBe(true);
      expect(detail.current).toMatchObject({ name: 'weekly-report', source: 'agent' });
      expect(detail.diff).toContain('+2. Chart it.');
      expect(detail.diff).toContain('-Edited by hand.');
      const refused = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${stale.id}/approve`).expect(409);
      expect(refused.body).toMatchObject({ code: 'skill_changed' });
      const unchanged = await request(t.httpUrl).get('/api/skills/weekly-report/content').expect(200);
      expect(unchanged.body.content).toContain('Edited by hand.');
      await request(t.httpUrl).post(`/api/skill-evolution/proposals/${stale.id}/reject`).expect(200);

      // a proposal based on the current hash applies; applied_version is the snapshot taken before the replace
      const fresh = await proposeVia(
        t,
        { action: 'update', name: 'weekly-report', candidate_content: skillMd('weekly-report', '# Steps\nVersion three.\n') },
        'Refresh the weekly report for week',
      );
      const applied = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${fresh.id}/approve`).expect(200);
      expect(applied.body.status).toBe('applied');
      expect(applied.body.applied_version).toMatch(/^\d{13}-[0-9a-f]{8}$/);
      const versions = await request(t.httpUrl).get('/api/skills/weekly-report/versions').expect(200);
      expect(versions.body.versions).toContain(applied.body.applied_version);
      const now = await request(t.httpUrl).get('/api/skills/weekly-report/content').expect(200);
      expect(now.body.content).toContain('Version three.');
    });

    it('Scenario: an update proposal whose target is no longer an agent Skill is refused with 403', async () => {
      await request(t.httpUrl)
        .post('/api/skills')
        .send({ name: 'weekly-report', content: skillMd('weekly-report'), source: 'agent' })
        .expect(201);
      const proposal = await proposeVia(t, {
        action: 'update',
        name: 'weekly-report',
        candidate_content: skillMd('weekly-report', '# Steps\nBetter.\n'),
      });
      await request(t.httpUrl).delete('/api/skills/weekly-report').expect(204);
      await request(t.httpUrl)
        .post('/api/skills')
        .send({ name: 'weekly-report', content: skillMd('weekly-report'), source: 'user' })
        .expect(201);
      const refused = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/approve`).expect(403);
      expect(refused.body).toMatchObject({ detail: 'evolution can modify only agent Skills' });
    });

    it('Scenario: rejecting a pending proposal keeps the Skills unchanged', async () => {
      const proposal = await proposeVia(t, { action: 'create', name: 'weekly-report', candidate_content: skillMd('weekly-report') });
      const rejected = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/reject`).expect(200);
      expect(rejected.body).toMatchObject({ id: proposal.id, status: 'rejected', applied_version: null });
      await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/reject`).expect(409);
      await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/approve`).expect(409);
      await request(t.httpUrl).get('/api/skills/weekly-report').expect(404);

      // a rejected proposal does not block the workflow from being proposed again
      evolverSteps.push({
        content: JSON.stringify({ action: 'create', name: 'weekly-report', candidate_content: skillMd('weekly-report') }),
      });
      const again = await turn(t, 'Build the weekly report for week 99', ['collect_data', 'render_report']);
      expect(again.outcome).toBe('proposed');
    });

    it('Scenario: an invalid candidate is kept for review but cannot be approved (422)', async () => {
      const proposal = await proposeVia(t, {
        action: 'create',
        name: 'weekly-report',
        candidate_content: skillMd('other-name'),
      });
      expect(proposal.validation).toEqual({ valid: false, errors: ['frontmatter name must match the package directory'] });
      const refused = await request(t.httpUrl).post(`/api/skill-evolution/proposals/${proposal.id}/approve`).expect(422);
      expect(refused.body).toMatchObject({
        detail: 'proposal candidate is invalid',
        errors: [{ field: 'candidate_content', message: 'frontmatter name must match the package directory' }],
      });
      await request(t.httpUrl).get('/api/skills/weekly-report').expect(404);
    });

    it.each([
      ['prose instead of JSON', { content: 'I suggest a weekly-report skill.' }, 'invalid_reply'],
      [
        'an update of a built-in Skill',
        { content: JSON.stringify({ action: 'update', name: 'weather', candidate_content: skillMd('weather') }) },
        'update_target_not_agent',
      ],
      ['a model error', { status: 500 }, 'model_error'],
    ])('Scenario: an unusable evolver answer (%s) is discarded', async (_label, step: FakeStep, reason) => {
      evolverSteps.push(step);
      const tools = ['collect_data', 'render_report'];
      await turn(t, 'Build the weekly report for week 1', tools);
      expect(await turn(t, 'Build the weekly report for week 2', tools)).toMatchObject({ outcome: 'discarded', reason });
      const list = await request(t.httpUrl).get('/api/skill-evolution/proposals').expect(200);
      expect(list.body.items).toEqual([]);
    });

    it('Scenario: unknown or malformed proposal ids are 404 problems', async () => {
      for (const id of ['0123456789abcdef0123456789abcdef', '..%2F..%2Fetc', 'x']) {
        const res = await request(t.httpUrl).get(`/api/skill-evolution/proposals/${id}`).expect(404);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.body).toMatchObject({ detail: 'proposal not found', code: 'proposal_not_found' });
      }
      await request(t.httpUrl).post('/api/skill-evolution/proposals/0123456789abcdef0123456789abcdef/approve').expect(404);
      await request(t.httpUrl).post('/api/skill-evolution/proposals/0123456789abcdef0123456789abcdef/reject').expect(404);
    });
  });

  /** Two recurring turns whose evolver answer is `reply`; resolves with the proposal they produced. */
  async function proposeVia(
    t: TestApp,
    reply: Record<string, unknown>,
    wording = 'Build the weekly report for week',
  ): Promise<SkillEvolutionProposal> {
    evolverSteps.push({ content: JSON.stringify(reply) });
    const tools = ['collect_data', 'render_report'];
    await turn(t, `${wording} 1`, tools);
    const evaluation = await turn(t, `${wording} 2`, tools);
    expect(evaluation.outcome).toBe('proposed');
    const res = await request(t.httpUrl).get(`/api/skill-evolution/proposals/${evaluation.proposalId}`).expect(200);
    return res.body as SkillEvolutionProposal;
  }
});
