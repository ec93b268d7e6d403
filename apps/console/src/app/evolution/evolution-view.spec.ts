import type { SkillEvolutionProposal } from '@cashcode/contracts';

import { diffLines, sortProposals } from './evolution-view';

function proposal(id: string, status: SkillEvolutionProposal['status'], createdAt: string): SkillEvolutionProposal {
  return {
    id,
    action: 'create',
    name: id,
    candidate_content: '',
    reason: '',
    evidence_ids: [],
    base_hash: null,
    status,
    validation: { valid: true, errors: [] },
    created_at: createdAt,
    updated_at: createdAt,
    applied_version: null,
    fingerprint: '',
    model: null,
  };
}

describe('sortProposals', () => {
  it('Scenario: the Evolution view lists pending proposals first, newest first', () => {
    const items = [
      proposal('old-pending', 'pending', '2026-07-01T00:00:00.000Z'),
      proposal('applied', 'applied', '2026-07-05T00:00:00.000Z'),
      proposal('rejected', 'rejected', '2026-07-06T00:00:00.000Z'),
      proposal('new-pending', 'pending', '2026-07-03T00:00:00.000Z'),
    ];
    expect(sortProposals(items).map((p) => p.id)).toEqual(['new-pending', 'old-pending', 'applied', 'rejected']);
  });
});

describe('diffLines', () => {
  it('classifies the lines of a unified diff', () => {
    const diff = '--- SKILL.md (current)\n+++ SKILL.md (proposed)\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n';
    expect(diffLines(diff).map((line) => line.kind)).toEqual(['meta', 'meta', 'hunk', 'context', 'remove', 'add']);
  });
});
