import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChannelPairingsStore, MAX_PENDING_PAIRINGS, PAIRING_TTL_MS } from './channel-pairings.store';

describe('ChannelPairingsStore', () => {
  let dir: string;
  let now: number;
  let store: ChannelPairingsStore;
  const applicant = (id: string, chatType: 'private' | 'group' = 'private') => ({ senderId: id, displayName: `User ${id}`, username: null, chatType });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pairings-'));
    now = Date.parse('2026-01-01T10:00:00Z');
    store = new ChannelPairingsStore(join(dir, 'telegram', 'pairings.json'), () => now);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('gives one code per sender while it is valid, and a new one once it expired', async () => {
    const first = await store.request(applicant('1'));
    expect(first).toEqual({ code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{8}$/), fresh: true });
    expect(await store.request(applicant('1'))).toEqual({ code: first.code, fresh: false });
    now += PAIRING_TTL_MS + 1;
    expect((await store.list()).pending).toEqual([]);
    const second = await store.request(applicant('1'));
    expect(second.fresh).toBe(true);
    expect(await store.approve(first.code)).toBeNull();
  });

  it('approves a code once: a private sender becomes the owner, a group only a group', async () => {
    const user = await store.request(applicant('1'));
    const group = await store.request(applicant('-100', 'group'));
    expect(await store.approve(user.code.toLowerCase())).toMatchObject({ sender_id: '1', kind: 'user' });
    expect(await store.approve(user.code)).toBeNull();
    expect(await store.approve(group.code)).toMatchObject({ sender_id: '-100', kind: 'group' });
    expect(await store.isOwner('1')).toBe(true);
    expect(await store.isOwner('-100')).toBe(false);
    const file = join(dir, 'telegram', 'pairings.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // acknowledged = on disk: a new store reads the same state
    const again = new ChannelPairingsStore(file, () => now);
    expect((await again.list()).senders.map((sender) => sender.sender_id)).toEqual(['1', '-100']);
    expect(JSON.parse(await readFile(file, 'utf8')).pending).toEqual([]);
  });

  it('revokes an approved sender; an unknown one is reported', async () => {
    const user = await store.request(applicant('1'));
    await store.approve(user.code);
    expect(await store.revoke('1')).toBe(true);
    expect(await store.revoke('1')).toBe(false);
    expect(await store.isOwner('1')).toBe(false);
  });

  it('keeps at most the newest pending requests', async () => {
    for (let i = 0; i < MAX_PENDING_PAIRINGS + 5; i++) await store.request(applicant(String(i)));
    const { pending } = await store.list();
    expect(pending).toHaveLength(MAX_PENDING_PAIRINGS);
    expect(pending[0]?.sender_id).toBe('5');
  });
});
