/**
 * Skills in chat through the real gateway and the fake model (openspec skills "Requirement: Skills in a turn" and
 * "Requirement: Skill tools"): skill_search → skill_load → skill_read_resource with the built-in Skills, explicit
 * selections (mentioned_skills and a legacy leading @name) and their failures, receipts shown as chips data on the user
 * row, the activated-skills hint, agent_skill_manage with its conflicts, `allowed-tools` pre-approvals, and required
 * MCP servers prepared on load.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { ensureMcpServersBuilt, stdioEntry, writeCatalog } from './support/mcp-test-servers';
import { buildZip, skillMd } from './support/skill-fixtures';
import { REPO_ROOT, startTestApp, type TestApp } from './support/test-app';
import { unframed } from './support/untrusted-frame';
import { configureFakeModel, putToolPolicies, WsTestClient } from './support/ws-client';

interface CompletionBody {
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}

const LLM = { provider: 'openai_compatible', model: 'fake-model' };
const bodyOf = (r: RecordedRequest | undefined): CompletionBody => r?.body as CompletionBody;
const toolNames = (r: RecordedRequest | undefined) => (bodyOf(r).tools ?? []).map((tool) => tool.function.name);

async function readJsonLines(file: string): Promise<Array<Record<string, unknown>>> {
  return (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('Skills in chat (e2e)', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let client: WsTestClient;
  let catalogDir: string;
  let chatCounter = 0;
  const newChatId = () => `skills-chat-${++chatCounter}`;

  beforeAll(async () => {
    ensureMcpServersBuilt();
    catalogDir = await fs.mkdtemp(join(tmpdir(), 'cashcode-skills-mcp-'));
    const catalog = writeCatalog(catalogDir, { stdio: stdioEntry() });
    fake = await FakeModelServer.start();
    t = await startTestApp({ env: { CASHCODE_MCP_CATALOG: catalog } });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    // MCP tools run without asking here; approvals have their own suite (approvals.e2e-spec.ts)
    await putToolPolicies(t.httpUrl, { defaults: { mcp: 'allow' } });
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await fs.rm(catalogDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    fake.reset();
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  async function turn(chatId: string, content: string, metadata: Record<string, unknown> = {}): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([
      client.next('done', (e) => e.chat_id === chatId),
      client.next('error', (e) => e.chat_id === chatId),
    ]);
    client.send({ type: 'message', chat_id: chatId, content, metadata: { llm: LLM, ...metadata } });
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  const toolResults = (events: ServerEvent[]) =>
    events.filter((e): e is Extract<ServerEvent, { event: 'tool_result' }> => e.event === 'tool_result');
  const historyOf = (chatId: string) => readJsonLines(join(t.config.memoryDir, chatId, 'history.jsonl'));
  const noHostPath = (text: string) => {
    for (const dir of [t.dataDir, REPO_ROOT]) expect(text).not.toContain(dir);
  };

  it('Scenario: the system prompt carries the Skill usage rules and the skill tools are visible', async () => {
    const chatId = newChatId();
    await turn(chatId, 'hello');
    const body = bodyOf(fake.completions[0]);
    expect(body.messages[0]?.content).toContain('## Skill usage');
    expect(body.messages[0]?.content).toContain('agent_skill_manage');
    expect(toolNames(fake.completions[0])).toEqual(
      expect.arrayContaining(['agent_skill_manage', 'skill_load', 'skill_search', 'tool_search']),
    );
    // skill_read_resource is offered once the chat has loaded a Skill
    expect(toolNames(fake.completions[0])).not.toContain('skill_read_resource');
  });

  it('Scenario: the installed Skills index is in the prompt by name and is snapshotted per chat at its first turn', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'one' }, { content: 'two' }, { content: 'three' });
    await turn(chatId, 'hello');
    const firstPrompt = bodyOf(fake.completions[0]).messages[0]?.content ?? '';
    expect(firstPrompt).toContain('## Installed Skills\n');
    expect(firstPrompt).toMatch(/\n- chart-visualization: \S/);
    const names = firstPrompt
      .slice(firstPrompt.indexOf('## Installed Skills'))
      .split('\n')
      .filter((line) => line.startsWith('- '))
      .map((line) => line.slice(2, line.indexOf(':')));
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(firstPrompt).not.toContain('index-probe');
    const zip = await buildZip([{ name: 'index-probe/SKILL.md', data: skillMd('index-probe', { description: 'Probe the index' }) }]);
    await request(t.httpUrl).post('/api/skills/import').attach('file', zip, 'index-probe.zip').expect(201);
    await turn(chatId, 'again');
    expect(bodyOf(fake.completions[1]).messages[0]?.content).toBe(firstPrompt);
    await turn(newChatId(), 'fresh chat');
    expect(bodyOf(fake.completions[2]).messages[0]?.content).toContain('\n- index-probe: Probe the index');
    noHostPath(firstPrompt);
  });

  it('Scenario: search → load → read resource; bodies stay in the turn, history keeps receipts, the hint appears next turn', async () => {
    const chatId = newChatId();
    fake.enqueue(
      { toolCalls: [{ id: 'c1', name: 'skill_search', arguments: '{"query":"chart dashboard"}' }] },
      { toolCalls: [{ id: 'c2', name: 'skill_load', arguments: '{"name":"chart-visualization"}' }] },
      {
        toolCalls: [
          { id: 'c3', name: 'skill_read_resource', arguments: '{"name":"chart-visualization","path":"templates/chart.html"}' },
        ],
      },
      { content: 'Chart ready.' },
    );
    const events = await turn(chatId, 'Draw a chart of my sales');
    expect(events.at(-1)?.event).toBe('done');
    const results = toolResults(events);
    expect(results.map((r) => r.tool_name)).toEqual(['skill_search', 'skill_load', 'skill_read_resource']);
    expect(results[0]?.result).toContain('"name": "chart-visualization"');
    expect(results[1]?.result).toBe('Loaded Skill: chart-visualization');
    expect(results[2]?.result).toBe('[Skill resource read: chart-visualization/templates/chart.html]');

    const loadMessage = bodyOf(fake.completions[2]).messages.at(-1)?.content ?? '';
    expect(loadMessage).toMatch(/^\[Skill loaded: chart-visualization@v1 sha256:[0-9a-f]{64}\]\n/);
    expect(loadMessage).toContain('Package files: references/echarts.md, templates/chart.html');
    expect(loadMessage).toContain('# Chart Visualization');
    noHostPath(loadMessage);
    const resource = bodyOf(fake.completions[3]).messages.at(-1)?.content ?? '';
    expect(resource).toContain('{{OPTION_JSON}}');

    const history = await historyOf(chatId);
    const toolRecords = history.filter((r) => r.role === 'tool');
    expect(toolRecords[1]?.content).toMatch(/^\[Skill loaded: chart-visualization@v1 sha256:[0-9a-f]{64}\]$/);
    expect(toolRecords[2]?.content).toBe('[Skill resource read: chart-visualization/templates/chart.html]');
    const metadata = JSON.parse(await fs.readFile(join(t.config.memoryDir, chatId, 'metadata.json'), 'utf8'));
    expect(Object.keys(metadata.activated_skills)).toEqual(['chart-visualization']);
    expect(metadata.activated_skills['chart-visualization']).toMatchObject({ version: '1' });

    // next turn: a hint, not the body; resources need a new load
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ id: 'c4', name: 'skill_read_resource', arguments: '{"name":"chart-visualization","path":"templates/chart.html"}' }] },
      { content: 'ok' },
    );
    await turn(chatId, 'Again');
    const system = bodyOf(fake.completions[0]).messages[0]?.content ?? '';
    expect(system).toContain('## Recently activated Skills');
    expect(system).toContain('- chart-visualization: Turn tabular or numeric data');
    const sent = JSON.stringify(bodyOf(fake.completions[0]).messages);
    expect(sent).not.toContain('# Chart Visualization');
    expect(bodyOf(fake.completions[1]).messages.at(-1)?.content).toBe('Error: load the Skill before reading its resources');
  });

  it('Scenario: skill_load errors are JSON (not found with suggestions, missing dependency) and loading twice is noted', async () => {
    const chatId = newChatId();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'a', name: 'skill_load', arguments: '{"name":"weathr"}' },
          { id: 'b', name: 'skill_load', arguments: '{"name":"github"}' },
          { id: 'c', name: 'skill_load', arguments: '{"name":" weather "}' },
          { id: 'd', name: 'skill_load', arguments: '{"name":"weather"}' },
        ],
      },
      { content: 'done' },
    );
    await turn(chatId, 'try loads');
    const messages = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''));
    expect(JSON.parse(messages[0] as string)).toEqual({ error: 'skill_not_found', name: 'weathr', suggestions: [] });
    expect(messages[1]).toBe('{"error": "missing_dependency", "name": "github", "missing": ["bin:gh"]}');
    expect(messages[2]).toMatch(/^\[Skill loaded: weather@v1 sha256:/);
    expect(messages[3]).toMatch(/^\[Skill loaded: weather@v1 sha256:[0-9a-f]{64}\] already_loaded=true$/);
  });

  it('Scenario: explicit mentioned_skills load before the model runs; /messages shows receipts as chips on the user row', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Sunny.' });
    const events = await turn(chatId, 'Weather in Paris?', { mentioned_skills: [{ name: 'weather', label: ' Weather ' }] });
    expect(events.at(-1)?.event).toBe('done');
    const body = bodyOf(fake.completions[0]);
    expect(body.messages[1]?.role).toBe('system');
    expect(body.messages[1]?.content).toMatch(/^The user explicitly selected these Skills:\n\n\[Skill loaded: weather@v1 /);
    expect(body.messages[1]?.content).toContain('# Weather');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'Weather in Paris?' });

    const history = await historyOf(chatId);
    expect(history.map((r) => r.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(history[1]?.content).toMatch(/^\[Skill loaded: weather@v1 sha256:[0-9a-f]{64}\]$/);
    const res = await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200);
    const hash = /sha256:([0-9a-f]{64})/.exec(history[1]?.content as string)?.[1];
    expect(res.body.messages).toEqual([
      {
        role: 'user',
        content: 'Weather in Paris?',
        mentioned_skills: [{ name: 'weather', label: 'Weather' }],
        loaded_skills: [{ name: 'weather', version: 1, hash }],
        cursor: 1,
      },
      {
        role: 'assistant',
        content: 'Sunny.',
        cursor: 3,
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        duration_ms: expect.any(Number),
      },
    ]);
  });

  it('Scenario: a legacy leading @name selects the Skill and the model gets the rest of the message', async () => {
    const chatId = newChatId();
    await turn(chatId, '@weather   forecast for Oslo');
    const body = bodyOf(fake.completions[0]);
    expect(body.messages[1]?.content).toContain('The user explicitly selected these Skills:');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'forecast for Oslo' });
    const history = await historyOf(chatId);
    expect(history[0]).toMatchObject({ role: 'user', content: '@weather   forecast for Oslo' });
  });

  it('Scenario: an explicit Skill that cannot load is a warning and the turn still runs', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'I cannot use gh here.' });
    const events = await turn(chatId, 'list my PRs', { mentioned_skills: [{ name: 'github' }] });
    const warning = events.find((event) => event.event === 'warning') as Extract<ServerEvent, { event: 'warning' }>;
    expect(warning).toEqual({
      event: 'warning',
      chat_id: chatId,
      subject: 'skill',
      name: 'github',
      code: 'missing_dependency',
      detail: 'Unable to load @github: {"error": "missing_dependency", "name": "github", "missing": ["bin:gh"]}',
    });
    expect(events.findIndex((event) => event.event === 'warning')).toBeLessThan(events.findIndex((event) => event.event === 'done'));
    expect(events.some((event) => event.event === 'error')).toBe(false);
    expect(fake.completions).toHaveLength(1);
    expect(bodyOf(fake.completions[0]).messages.at(-1)).toEqual({ role: 'user', content: 'list my PRs' });
    const history = await historyOf(chatId);
    expect(history.map((record) => [record.role, record.content])).toEqual([
      ['user', 'list my PRs'],
      ['assistant', 'I cannot use gh here.'],
    ]);
  });

  it('Scenario: a leading @word that names no Skill is plain text', async () => {
    const chatId = newChatId();
    fake.enqueue({ content: 'Hello to you.' });
    const events = await turn(chatId, '@nope hello');
    expect(events.some((event) => event.event === 'warning' || event.event === 'error')).toBe(false);
    expect(bodyOf(fake.completions[0]).messages.at(-1)).toEqual({ role: 'user', content: '@nope hello' });
    expect((await historyOf(chatId))[0]).toMatchObject({ role: 'user', content: '@nope hello' });
  });

  it('Scenario: agent_skill_manage creates an agent Skill, then reports conflicts and validation errors', async () => {
    const chatId = newChatId();
    const content = skillMd('made-by-agent', { extra: 'display_name: 认知扭曲' });
    const args = (name: string, text: string) =>
      JSON.stringify({ action: 'create', name, content: text, support_files: { 'references/notes.md': 'n' }, reason: ' user asked ' });
    fake.enqueue(
      { toolCalls: [{ id: 'm1', name: 'agent_skill_manage', arguments: args('made-by-agent', content) }] },
      { toolCalls: [{ id: 'm2', name: 'agent_skill_manage', arguments: args('made-by-agent', content) }] },
      { toolCalls: [{ id: 'm3', name: 'agent_skill_manage', arguments: args('weather', skillMd('weather')) }] },
      { toolCalls: [{ id: 'm4', name: 'agent_skill_manage', arguments: args('bad-one', skillMd('other')) }] },
      { toolCalls: [{ id: 'm5', name: 'agent_skill_manage', arguments: '{"action":"delete","name":"x","content":"y"}' }] },
      { content: 'Created.' },
    );
    await turn(chatId, 'Create a skill for this');
    const results = bodyOf(fake.completions[5]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''));
    const created = JSON.parse(results[0] as string);
    expect(created).toEqual({
      success: true,
      action: 'create',
      name: 'made-by-agent',
      display_name: '认知扭曲',
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      source: 'agent',
      enabled: true,
    });
    expect(results[0]).toContain('"display_name": "认知扭曲"');
    expect(JSON.parse(results[1] as string)).toMatchObject({ success: false, code: 'conflict', detail: 'Skill already exists in agent: made-by-agent' });
    expect(JSON.parse(results[2] as string)).toMatchObject({ success: false, code: 'conflict', detail: 'Skill already exists in builtin: weather' });
    expect(JSON.parse(results[3] as string)).toMatchObject({
      success: false,
      code: 'validation_error',
      detail: 'frontmatter name must match the package directory',
    });
    expect(JSON.parse(results[4] as string)).toMatchObject({ success: false, code: 'unsupported_action', detail: 'action must be create' });
    for (const result of results) noHostPath(result);

    const meta = JSON.parse(await fs.readFile(join(t.config.skillsAgentDir, 'made-by-agent', '_meta.json'), 'utf8'));
    expect(meta).toMatchObject({ source: 'agent', enabled: true, agentCreated: true, creation_reason: 'user asked' });
    const listed = await request(t.httpUrl).get('/api/skills?source=agent').expect(200);
    expect(listed.body.items.map((r: { name: string }) => r.name)).toEqual(['made-by-agent']);
    expect((await fs.readdir(t.config.skillsAgentDir)).filter((entry) => entry.startsWith('.'))).toEqual([]);
  });

  it('Scenario: allowed-tools Bash(git:*) pre-approves git only, for that turn, and no longer blocks other tools', async () => {
    const created = await request(t.httpUrl)
      .post('/api/skills')
      .send({ name: 'git-helper', content: skillMd('git-helper', { extra: 'allowed-tools: Bash(git:*) Read' }) })
      .expect(201);
    // pre-approvals apply only once the owner granted them for this content
    await request(t.httpUrl).post('/api/skills/git-helper/pre-approvals').send({ hash: created.body.pre_approvals.hash }).expect(200);
    const chatId = newChatId();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'g1', name: 'exec', arguments: '{"command":"git --version"}' },
          { id: 'g2', name: 'exec', arguments: '{"command":"touch not-git.txt"}' },
          { id: 'g3', name: 'write_file', arguments: '{"path":"skill-notes.txt","content":"written"}' },
        ],
      },
      { content: 'ok' },
    );
    const before = client.chatEvents(chatId).length;
    const end = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'message', chat_id: chatId, content: 'check git', metadata: { llm: LLM, mentioned_skills: [{ name: 'git-helper' }] } });
    // git is pre-approved by the Skill; `touch` is not, so it is asked
    const asked = await client.waitFor('approval_request', (e) => e.chat_id === chatId);
    expect(asked).toMatchObject({ call_id: 'g2', tool: 'exec' });
    client.send({ type: 'approval', chat_id: chatId, call_id: 'g2', decision: 'deny' });
    await end;
    const events = client.chatEvents(chatId).slice(before);
    // every tool stays offered: allowed-tools no longer restricts
    expect(toolNames(fake.completions[0])).toEqual(expect.arrayContaining(['exec', 'write_file', 'web_fetch', 'read_file']));
    expect(events.filter((e) => e.event === 'approval_request').map((e) => (e as { call_id: string }).call_id)).toEqual(['g2']);
    expect(events.find((e) => e.event === 'approval_resolved' && e.call_id === 'g1')).toMatchObject({ decision: 'allow_once', by: 'policy' });
    expect(toolResults(events).map((r) => [r.call_id, r.ok])).toEqual([
      ['g1', true],
      ['g2', false],
      ['g3', true],
    ]);
    const results = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''));
    expect(results[0]).toMatch(/^\$ git --version\nExit code: 0/);
    expect(results[1]).toMatch(/^The user denied running `touch not-git.txt`/);
    expect(await fs.readFile(join(t.config.workspaceDir, 'skill-notes.txt'), 'utf8')).toBe('written');

    // the next turn without the Skill: git asks again
    fake.reset();
    fake.enqueue({ toolCalls: [{ id: 'g4', name: 'exec', arguments: '{"command":"git --version"}' }] }, { content: 'ok' });
    const next = client.next('done', (e) => e.chat_id === chatId);
    client.send({ type: 'message', chat_id: chatId, content: 'again', metadata: { llm: LLM } });
    await client.waitFor('approval_request', (e) => e.call_id === 'g4');
    client.send({ type: 'approval', chat_id: chatId, call_id: 'g4', decision: 'deny' });
    await next;
  });

  it('Scenario: an imported Agent-Skills package loads and its scripts and LICENSE are readable resources', async () => {
    const content = [
      '---',
      'name: pdf-helper',
      'description: Extract text from PDF files',
      'license: Apache-2.0',
      'allowed-tools: Read Bash(python3:*)',
      '---',
      '',
      'Run scripts/extract.py with python3.',
      '',
    ].join('\n');
    const zip = await buildZip([
      { name: 'pdf-helper/SKILL.md', data: content },
      { name: 'pdf-helper/LICENSE.txt', data: 'Apache License' },
      { name: 'pdf-helper/scripts/extract.py', data: 'print("text")\n' },
      { name: 'pdf-helper/references/REFERENCE.md', data: '# Reference' },
    ]);
    const imported = await request(t.httpUrl).post('/api/skills/import').attach('file', zip, 'pdf-helper.zip').expect(201);
    await request(t.httpUrl).post('/api/skills/pdf-helper/pre-approvals').send({ hash: imported.body.pre_approvals.hash }).expect(200);
    const chatId = newChatId();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'r1', name: 'skill_read_resource', arguments: '{"name":"pdf-helper","path":"scripts/extract.py"}' },
          { id: 'r2', name: 'skill_read_resource', arguments: '{"name":"pdf-helper","path":"LICENSE.txt"}' },
          { id: 'r3', name: 'skill_read_resource', arguments: '{"name":"pdf-helper","path":"../SKILL.md"}' },
          { id: 'r4', name: 'skill_read_resource', arguments: '{"name":"pdf-helper","path":"scripts/missing.py"}' },
        ],
      },
      { content: 'ok' },
    );
    await turn(chatId, '@pdf-helper extract report.pdf');
    const first = bodyOf(fake.completions[0]);
    expect(first.messages[1]?.content).toContain('Package files: LICENSE.txt, references/REFERENCE.md, scripts/extract.py');
    expect(first.messages[1]?.content).toContain(
      'Pre-approved while this Skill is loaded (these run without asking the user): Read, Bash(python3:*)',
    );
    expect(toolNames(fake.completions[0])).toEqual(expect.arrayContaining(['exec', 'read_file', 'write_file', 'skill_load']));
    const results = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''));
    expect(results[0]).toBe('[Skill resource read: pdf-helper/scripts/extract.py]\n\nprint("text")\n');
    expect(results[1]).toBe('[Skill resource read: pdf-helper/LICENSE.txt]\n\nApache License');
    expect(results[2]).toBe('Error: support path must be package-relative');
    expect(results[3]).toBe('Error: resource not found');
  });

  it('Scenario: skill_read_resource returns type and size for a binary file instead of its bytes', async () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n', 'latin1'), Buffer.alloc(4096, 0xd3), Buffer.from([0, 1, 2])]);
    const zip = await buildZip([
      { name: 'pdf-forms/SKILL.md', data: skillMd('pdf-forms', { description: 'Fill PDF forms' }) },
      { name: 'pdf-forms/assets/blank.pdf', data: pdf },
      { name: 'pdf-forms/references/forms.md', data: '# Forms\n' },
    ]);
    await request(t.httpUrl).post('/api/skills/import').attach('file', zip, 'pdf-forms.zip').expect(201);
    const chatId = newChatId();
    fake.enqueue(
      {
        toolCalls: [
          { id: 'b1', name: 'skill_read_resource', arguments: '{"name":"pdf-forms","path":"assets/blank.pdf"}' },
          { id: 'b2', name: 'skill_read_resource', arguments: '{"name":"pdf-forms","path":"references/forms.md"}' },
        ],
      },
      { content: 'ok' },
    );
    const events = await turn(chatId, '@pdf-forms fill it');
    const results = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''));
    expect(results[0]).toBe(
      '[Skill resource read: pdf-forms/assets/blank.pdf]\n\nBinary file: assets/blank.pdf\nType: application/pdf\n' +
        `Size: ${pdf.length} bytes\nIts content is not shown as text. Use it through the commands or scripts the Skill ` +
        "describes; its path for exec is `/skills/pdf-forms/assets/blank.pdf` (`assets/blank.pdf` relative to the Skill's " +
        'base directory /skills/pdf-forms).',
    );
    expect(results[1]).toBe('[Skill resource read: pdf-forms/references/forms.md]\n\n# Forms\n');
    // Tool calls of one model reply run concurrently, so their tool_result events arrive in completion order.
    expect(
      toolResults(events)
        .map((r) => r.result)
        .sort(),
    ).toEqual(['[Skill resource read: pdf-forms/assets/blank.pdf]', '[Skill resource read: pdf-forms/references/forms.md]']);
    noHostPath(results[0] ?? '');
  });

  it('Scenario: skill_read_resource returns the head of a large text file with its size and how to read the rest', async () => {
    const line = 'x'.repeat(99) + '\n';
    const big = line.repeat(3000); // 300,000 bytes, over the 200,000-character head
    const zip = await buildZip([
      { name: 'big-ref/SKILL.md', data: skillMd('big-ref', { description: 'Has a large reference' }) },
      { name: 'big-ref/references/big.md', data: big },
    ]);
    await request(t.httpUrl).post('/api/skills/import').attach('file', zip, 'big-ref.zip').expect(201);
    fake.enqueue(
      { toolCalls: [{ id: 'g1', name: 'skill_read_resource', arguments: '{"name":"big-ref","path":"references/big.md"}' }] },
      { content: 'ok' },
    );
    await turn(newChatId(), '@big-ref read it');
    const result = bodyOf(fake.completions[1]).messages.filter((m) => m.role === 'tool').map((m) => unframed(m.content ?? ''))[0] ?? '';
    const prefix = '[Skill resource read: big-ref/references/big.md]\n\n';
    expect(result.startsWith(prefix + big.slice(0, 200_000))).toBe(true);
    expect(result.slice(prefix.length + 200_000)).toBe(
      '\n\n[Truncated: the first 200000 characters of references/big.md (300000 bytes in total) are shown. Read the rest ' +
        "with exec, e.g. `sed -n '2001,2501p' /skills/big-ref/references/big.md` or " +
        '`tail -c +200001 /skills/big-ref/references/big.md | head -c 100000`.]',
    );
  });

  it('Scenario: loading a Skill never runs its scripts', async () => {
    const marker = join(t.config.workspaceDir, 'skill-script-ran.txt');
    const zip = await buildZip([
      {
        name: 'script-probe/SKILL.md',
        data: skillMd('script-probe', { description: 'Runs a setup script', extra: 'allowed-tools: Bash(sh:*)', body: 'Run `sh scripts/setup.sh`.' }),
      },
      { name: 'script-probe/scripts/setup.sh', data: `echo ran > ${JSON.stringify(marker)}\n`, mode: 0o755 },
    ]);
    await request(t.httpUrl).post('/api/skills/import').attach('file', zip, 'script-probe.zip').expect(201);
    const chatId = newChatId();
    fake.enqueue({ toolCalls: [{ id: 'p1', name: 'skill_load', arguments: '{"name":"script-probe"}' }] }, { content: 'loaded' });
    const events = await turn(chatId, '@script-probe prepare');
    expect(toolResults(events).map((r) => r.tool_name)).toEqual(['skill_load']);
    expect(events.some((e) => e.event === 'approval_request')).toBe(false);
    expect(bodyOf(fake.completions[0]).messages[1]?.content).toContain('Run `sh scripts/setup.sh`.');
    await expect(fs.stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('Scenario: a Skill that requires an MCP server connects it on load; its tools are visible in the next iteration', async () => {
    await request(t.httpUrl)
      .post('/api/skills')
      .send({ name: 'needs-mcp', content: skillMd('needs-mcp', { extra: 'requires:\n  mcp_servers: [stdio]' }) })
      .expect(201);
    const listed = await request(t.httpUrl).get('/api/skills/needs-mcp').expect(200);
    expect(listed.body.availability).toBe('available');
    const chatId = newChatId();
    fake.enqueue(
      { toolCalls: [{ id: 'l1', name: 'skill_load', arguments: '{"name":"needs-mcp"}' }] },
      { toolCalls: [{ id: 'l2', name: 'mcp_stdio_say_hello', arguments: '{}' }] },
      { content: 'done' },
    );
    const events = await turn(chatId, 'use the server');
    expect(events.at(-1)?.event).toBe('done');
    expect(toolNames(fake.completions[0])).not.toContain('mcp_stdio_say_hello');
    expect(toolNames(fake.completions[1])).toContain('mcp_stdio_say_hello');
    const hello = toolResults(events).find((r) => r.tool_name === 'mcp_stdio_say_hello');
    expect(hello?.ok).toBe(true);

    await request(t.httpUrl)
      .post('/api/skills')
      .send({ name: 'needs-ghost-mcp', content: skillMd('needs-ghost-mcp', { extra: 'requires:\n  mcp_servers: [ghost]' }) })
      .expect(201);
    const ghost = await request(t.httpUrl).get('/api/skills/needs-ghost-mcp').expect(200);
    expect(ghost.body).toMatchObject({ availability: 'missing_dependency', missing: ['mcp:ghost'] });
    fake.enqueue({ content: 'went without it' });
    const failed = await turn(newChatId(), '@needs-ghost-mcp go');
    expect(failed.find((event) => event.event === 'warning')).toMatchObject({
      subject: 'skill',
      code: 'mcp_prepare_failed',
      detail: 'Unable to load @needs-ghost-mcp: {"error": "mcp_prepare_failed", "name": "needs-ghost-mcp", "server": "ghost"}',
    });
    expect(failed.at(-1)?.event).toBe('done');
    // configuring the server in the MCP catalog makes the Skill available
    await request(t.httpUrl)
      .post('/api/mcp/servers')
      .send({ name: 'ghost', display_name: 'Ghost', url: 'http://127.0.0.1:9/sse' })
      .expect(201);
    const now = await request(t.httpUrl).get('/api/skills/needs-ghost-mcp').expect(200);
    expect(now.body).toMatchObject({ availability: 'available', missing: [] });
  });
});
