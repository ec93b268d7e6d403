import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAT_ID_PATTERN } from '@cashcode/contracts';
import { ChannelConversationsStore, conversationChatId } from './channel-conversations.store';

describe('ChannelConversationsStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conversations-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('chat ids stay within the chat id pattern, fresh ones differ', () => {
    for (const conversation of ['4242', '-1001234567890', 'weird/id with spaces', 'x'.repeat(200)]) {
      const base = conversationChatId('tg-777000111', conversation, false);
      const fresh = conversationChatId('tg-777000111', conversation, true);
      expect(base).toMatch(CHAT_ID_PATTERN);
      expect(fresh).toMatch(CHAT_ID_PATTERN);
      expect(fresh).not.toBe(base);
    }
    expect(conversationChatId('tg-1', '-100', false)).toBe('tg-1--100');
  });

  it('stores a conversation on disk (0600), finds it by chat, remembers untrusted senders once, retires a deleted chat', async () => {
    const path = join(dir, 'telegram', 'conversations.json');
    const store = new ChannelConversationsStore(path);
    await store.put('-100', { chat_id: 'tg-1--100', chat_type: 'group', display_name: 'Family', sender_id: '-100', untrusted: [] });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await store.addUntrusted('-100', { sender_id: '8', display_name: 'Dave' });
    expect(await store.addUntrusted('-100', { sender_id: '8', display_name: 'Dave' })).toEqual([{ sender_id: '8', display_name: 'Dave' }]);
    const again = new ChannelConversationsStore(path);
    expect(await again.byChat('tg-1--100')).toMatchObject({ conversationId: '-100', entry: { untrusted: [{ sender_id: '8' }] } });
    await again.forgetChat('-100', 'another-chat');
    expect((await again.get('-100'))?.retired).toBeUndefined();
    await again.forgetChat('-100', 'tg-1--100');
    expect(JSON.parse(await readFile(path, 'utf8')).conversations['-100'].retired).toBe(true);
  });

  it('a write that fails changes nothing in memory', async () => {
    const path = join(dir, 'telegram', 'conversations.json');
    const store = new ChannelConversationsStore(path);
    await store.put('1', { chat_id: 'tg-1-1', chat_type: 'private', display_name: 'Ada', sender_id: '1', untrusted: [] });
    // the file cannot be replaced any more: a directory is in its place (as root, too)
    await rm(path);
    await mkdir(path);
    await expect(store.put('2', { chat_id: 'tg-1-2', chat_type: 'private', display_name: 'Bob', sender_id: '2', untrusted: [] })).rejects.toThrow();
    expect(await store.get('2')).toBeNull();
    expect(await store.get('1')).toMatchObject({ chat_id: 'tg-1-1' });
  });
});
