import { UrlSegment } from '@angular/router';

import { chatUrl, chatUrlMatcher, decideChatUrl, isChatUrl, validChatId, type ChatUrlInput } from './chat-url';

const segments = (...paths: string[]) => paths.map((path) => new UrlSegment(path, {}));
const base: ChatUrlInput = {
  urlId: null,
  urlChanged: false,
  followed: false,
  first: false,
  activeChatId: 'a',
  activePersisted: true,
  newChatPending: false,
};

describe('chat URL', () => {
  it('matches / and /chat/<id> only', () => {
    expect(chatUrlMatcher(segments())).toEqual({ consumed: [] });
    const matched = chatUrlMatcher(segments('chat', 'abc'));
    expect(matched?.posParams?.['id'].path).toBe('abc');
    expect(chatUrlMatcher(segments('chat'))).toBeNull();
    expect(chatUrlMatcher(segments('settings'))).toBeNull();
    expect(chatUrlMatcher(segments('chat', 'a', 'b'))).toBeNull();
    expect(isChatUrl('/')).toBe(true);
    expect(isChatUrl('/chat/abc?x=1')).toBe(true);
    expect(isChatUrl('/settings/llm')).toBe(false);
    expect(chatUrl('a b')).toBe('/chat/a%20b');
    expect(validChatId('abc-1:2_3')).toBe('abc-1:2_3');
    expect(validChatId('bad id!')).toBeNull();
  });

  it('Scenario: a deep link opens its chat', () => {
    expect(decideChatUrl({ ...base, first: true, urlChanged: true, urlId: 'b' })).toEqual({ kind: 'open', chatId: 'b' });
    expect(decideChatUrl({ ...base, urlChanged: true, urlId: 'a' })).toEqual({ kind: 'none' });
  });

  it('Scenario: back and forward move between chats', () => {
    // back to an earlier chat's URL opens it; forward to `/` (a new chat that was left empty) starts a new chat
    expect(decideChatUrl({ ...base, urlChanged: true, urlId: 'b' })).toEqual({ kind: 'open', chatId: 'b' });
    expect(decideChatUrl({ ...base, urlChanged: true, urlId: null })).toEqual({ kind: 'newChat' });
    // the New chat button already asked for one
    expect(decideChatUrl({ ...base, urlChanged: true, urlId: null, newChatPending: true })).toEqual({ kind: 'none' });
  });

  it('Scenario: a new chat gets its URL once it is saved', () => {
    expect(decideChatUrl({ ...base, urlId: null, activeChatId: 'n', activePersisted: false })).toEqual({ kind: 'none' });
    expect(decideChatUrl({ ...base, urlId: null, activeChatId: 'n', activePersisted: true })).toEqual({
      kind: 'navigate',
      url: '/chat/n',
      urlId: 'n',
    });
  });

  it('the URL follows the open chat on a full page load at / and when the open chat is deleted', () => {
    // a full page load at `/` keeps the chat the tab had open and gives it its URL
    expect(decideChatUrl({ ...base, first: true, urlChanged: true, urlId: null })).toEqual({
      kind: 'navigate',
      url: '/chat/a',
      urlId: 'a',
    });
    // the open chat was deleted: the next one is opened, or a fresh chat at `/`
    expect(decideChatUrl({ ...base, urlId: 'gone', activeChatId: 'b' })).toEqual({
      kind: 'navigate',
      url: '/chat/b',
      urlId: 'b',
    });
    expect(decideChatUrl({ ...base, urlId: 'gone', activeChatId: 'n', activePersisted: false })).toEqual({
      kind: 'navigate',
      url: '/',
      urlId: null,
    });
    // a deep link to an unknown chat stays on its URL (the page shows "not found")
    expect(decideChatUrl({ ...base, urlId: 'x', activeChatId: 'x', activePersisted: false })).toEqual({ kind: 'none' });
  });

  it('Scenario: the URL following the open chat lands after New chat opened another chat', () => {
    // a page load at `/` opened the latest chat `a` and moved the URL to /chat/a; New chat's `n` opened before the
    // router landed there: the landing follows `n` (back to `/`) instead of reopening `a`
    const landed = { ...base, urlChanged: true, followed: true, urlId: 'a', activeChatId: 'n', activePersisted: false };
    expect(decideChatUrl(landed)).toEqual({ kind: 'navigate', url: '/', urlId: null });
    // the same URL change made by the user (back to /chat/a) opens `a`
    expect(decideChatUrl({ ...landed, followed: false })).toEqual({ kind: 'open', chatId: 'a' });
    // a move to `/` that lands once the new chat is saved gives it its URL instead of starting yet another chat
    const saved = { ...base, urlChanged: true, followed: true, urlId: null, activeChatId: 'n', activePersisted: true };
    expect(decideChatUrl(saved)).toEqual({ kind: 'navigate', url: '/chat/n', urlId: 'n' });
    expect(decideChatUrl({ ...saved, followed: false })).toEqual({ kind: 'newChat' });
    // landing on the chat still open changes nothing
    expect(decideChatUrl({ ...landed, activeChatId: 'a', activePersisted: true })).toEqual({ kind: 'none' });
  });
});
