import type { SkillEvolutionEvidence } from '@cashcode/contracts';
import {
  buildEvolverRequest,
  CONTRACT_MAX_CHARS,
  DEFAULT_REASON,
  EVOLVER_RULES,
  EXISTING_SKILLS_MAX,
  FALLBACK_CONTRACT,
  parseEvolverReply,
} from './evolver';

const SKILL_MD = '---\nname: weekly-report\ndescription: Build the weekly report\n---\n\n# Steps\n1. Read the log\n';

function evidence(n: number, size = 100): SkillEvolutionEvidence {
  return {
    id: `17850528000${String(n).padStart(2, '0')}-0000000${n % 10}`,
    fingerprint: 'f'.repeat(24),
    chat_id_hash: 'c'.repeat(12),
    user: `request ${n} ${'u'.repeat(size)}`,
    assistant: 'a'.repeat(size),
    tools: ['read_file', 'grep'],
    tool_calls: [{ name: 'read_file', arguments: '{"path":"x"}' }],
    tool_receipts: ['r'.repeat(size)],
    created_at: '2026-07-26T04:00:00.000Z',
  };
}

const skills = Array.from({ length: 120 }, (_, i) => ({
  name: `skill-${i}`,
  description: 'd'.repeat(400),
  source: 'user' as const,
  version: 1,
}));

describe('buildEvolverRequest', () => {
  it('Scenario: the evolver sees only the contract, bounded skill summaries, the evidence and the rules', () => {
    const text = buildEvolverRequest({ contract: 'c'.repeat(9000), skills, evidence: [evidence(1), evidence(2)], maxChars: 1_000_000 });
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['contract', 'existing_skills', 'evidence', 'rules']);
    expect((body['contract'] as string).length).toBe(CONTRACT_MAX_CHARS);
    const summaries = body['existing_skills'] as Array<Record<string, unknown>>;
    expect(summaries).toHaveLength(EXISTING_SKILLS_MAX);
    expect(Object.keys(summaries[0] ?? {})).toEqual(['name', 'description', 'source', 'version']);
    expect((summaries[0]?.['description'] as string).length).toBeLessThanOrEqual(160);
    expect(body['rules']).toEqual(EVOLVER_RULES);
    expect(JSON.stringify(body['evidence'])).not.toContain('chat_id_hash');
  });

  it('uses the fallback contract without skill-creator', () => {
    const body = JSON.parse(buildEvolverRequest({ contract: null, skills: [], evidence: [evidence(1)], maxChars: 12_000 }));
    expect(body.contract).toBe(FALLBACK_CONTRACT);
  });

  it('Scenario: the request stays valid JSON within SKILL_EVOLUTION_MAX_CONTEXT_CHARS', () => {
    for (const maxChars of [1000, 3000, 12_000]) {
      const text = buildEvolverRequest({
        contract: 'c'.repeat(5000),
        skills,
        evidence: [evidence(1, 2000), evidence(2, 2000)],
        maxChars,
      });
      expect(text.length).toBeLessThanOrEqual(maxChars);
      if (maxChars >= 3000) expect(() => JSON.parse(text)).not.toThrow();
    }
  });
});

describe('parseEvolverReply', () => {
  const reply = (value: unknown) => JSON.stringify(value);

  it('Scenario: a well-formed reply becomes a draft', () => {
    expect(parseEvolverReply(reply({ action: 'create', name: 'weekly-report', candidate_content: SKILL_MD, reason: ' why ' }))).toEqual({
      ok: true,
      draft: { action: 'create', name: 'weekly-report', candidate_content: SKILL_MD, reason: 'why' },
    });
  });

  it('accepts one surrounding json code fence and defaults the reason', () => {
    const fenced = '```json\n' + reply({ action: 'update', name: 'weekly-report', candidate_content: SKILL_MD }) + '\n```';
    const result = parseEvolverReply(fenced);
    expect(result).toMatchObject({ ok: true, draft: { action: 'update', reason: DEFAULT_REASON } });
  });

  it.each([
    ['prose', 'Here is my proposal: {"action":"create"}', 'not_json_object'],
    ['broken JSON', '{"action": "create",', 'not_json'],
    ['an array', '[1]', 'not_json_object'],
    ['a bad action', reply({ action: 'delete', name: 'x', candidate_content: SKILL_MD }), 'bad_action'],
    ['an invalid name', reply({ action: 'create', name: 'Bad Name', candidate_content: SKILL_MD }), 'bad_name'],
    ['blank content', reply({ action: 'create', name: 'x', candidate_content: '  ' }), 'missing_content'],
    ['unexpected keys', reply({ action: 'create', name: 'x', candidate_content: SKILL_MD, tools: ['exec'] }), 'unexpected_keys'],
    ['a non-string reason', reply({ action: 'create', name: 'x', candidate_content: SKILL_MD, reason: 5 }), 'bad_reason'],
    ['oversized content', reply({ action: 'create', name: 'x', candidate_content: 'x'.repeat(80_001) }), 'content_too_large'],
  ])('Scenario: an invalid reply (%s) is discarded', (_label, text, reason) => {
    expect(parseEvolverReply(text)).toEqual({ ok: false, reason });
  });
});
