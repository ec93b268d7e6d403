import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { SkillEvolutionEvidence } from '@cashcode/contracts';
import type { AppConfig } from '../config/app-config';
import { EvidenceStore } from './evidence-store';

function record(ms: number, fingerprint: string): SkillEvolutionEvidence {
  return {
    id: `${ms}-0000abcd`,
    fingerprint,
    chat_id_hash: 'c'.repeat(12),
    user: 'u',
    assistant: 'a',
    tools: ['x', 'y'],
    tool_calls: [],
    tool_receipts: [],
    created_at: new Date(ms).toISOString(),
  };
}

describe(EvidenceStore.name, () => {
  let dir: string;
  const config = (maxEvidence: number) =>
    ({ skillEvolutionDir: dir, skillEvolutionMaxEvidence: maxEvidence }) as unknown as AppConfig;

  beforeAll(() => Logger.overrideLogger(false));

  beforeEach(async () => {
    dir = await fs.mkdtemp(join(tmpdir(), 'cashcode-evidence-'));
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('Scenario: the oldest evidence beyond SKILL_EVOLUTION_MAX_EVIDENCE is deleted', async () => {
    const store = new EvidenceStore(config(10));
    const base = 1_785_052_800_000;
    for (let i = 0; i < 12; i++) await store.add(record(base + i, i % 2 === 0 ? 'even' : 'odd'));
    const files = (await fs.readdir(join(dir, 'evidence'))).sort();
    expect(files).toHaveLength(10);
    expect(files[0]).toBe(`${base + 2}-0000abcd.json`);
    expect(await store.idsWithFingerprint('even')).toEqual([2, 4, 6, 8, 10].map((i) => `${base + i}-0000abcd`));
  });

  it('rebuilds its index from disk, skipping unreadable files, and reads records back', async () => {
    const first = new EvidenceStore(config(500));
    await first.add(record(1_785_052_800_000, 'fp'));
    await first.add(record(1_785_052_800_001, 'fp'));
    await fs.writeFile(join(dir, 'evidence', '1785052800002-0000abcd.json'), '{ torn');
    const second = new EvidenceStore(config(500));
    expect(await second.idsWithFingerprint('fp')).toEqual(['1785052800000-0000abcd', '1785052800001-0000abcd']);
    const records = await second.readMany(['1785052800001-0000abcd', '1785052800002-0000abcd', '../../etc/passwd']);
    expect(records.map((r) => r.id)).toEqual(['1785052800001-0000abcd']);
  });
});
