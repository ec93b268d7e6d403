import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { SkillEvolutionProposal } from '@cashcode/contracts';
import type { AppConfig } from '../config/app-config';
import { ProposalStore } from './proposal-store';

function proposal(id: string, createdAt: string, overrides: Partial<SkillEvolutionProposal> = {}): SkillEvolutionProposal {
  return {
    id,
    action: 'create',
    name: 'weekly-report',
    candidate_content: '---\nname: weekly-report\ndescription: d\n---\nbody\n',
    reason: 'Reusable workflow evidence',
    evidence_ids: [],
    base_hash: null,
    status: 'pending',
    validation: { valid: true, errors: [] },
    created_at: createdAt,
    updated_at: createdAt,
    applied_version: null,
    fingerprint: 'f'.repeat(24),
    model: { provider: 'openai_compatible', model: 'm' },
    ...overrides,
  };
}

describe(ProposalStore.name, () => {
  let dir: string;
  let store: ProposalStore;

  beforeAll(() => Logger.overrideLogger(false));

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-proposals-'));
    store = new ProposalStore({ skillEvolutionDir: dir } as unknown as AppConfig);
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: proposals are listed newest first and unreadable files are skipped', async () => {
    await store.save(proposal('a'.repeat(32), '2026-07-26T04:00:00.000Z'));
    await store.save(proposal('b'.repeat(32), '2026-07-27T04:00:00.000Z'));
    await fs.writeFile(join(dir, 'proposals', `${'c'.repeat(32)}.json`), '{"id": 1}');
    await fs.writeFile(join(dir, 'proposals', 'notes.txt'), 'x');
    const list = await store.list();
    expect(list.map((p) => p.id)).toEqual(['b'.repeat(32), 'a'.repeat(32)]);
    expect(await store.get('c'.repeat(32))).toBeNull();
    expect(await store.get('../proposals/x')).toBeNull();
  });

  it('Scenario: only pending or applied proposals block a fingerprint', async () => {
    await store.save(proposal('a'.repeat(32), '2026-07-26T04:00:00.000Z', { status: 'rejected' }));
    expect(await store.hasOpenWithFingerprint('f'.repeat(24))).toBe(false);
    await store.save(proposal('b'.repeat(32), '2026-07-26T04:00:00.000Z', { status: 'applied', applied_version: '1' }));
    expect(await store.hasOpenWithFingerprint('f'.repeat(24))).toBe(true);
    expect(await store.hasOpenWithFingerprint('e'.repeat(24))).toBe(false);
  });
});
