/**
 * A URL per chat (openspec console "Requirement: A URL per chat"): `/` is the chat page without a chat in the URL,
 * `/chat/<id>` names the open chat. One route matches both, so moving between them keeps the same ChatPage (the
 * composer keeps its text and focus when a new chat gets its URL).
 */
import type { Route, UrlMatchResult, UrlSegment } from '@angular/router';
import { CHAT_ID_PATTERN } from '@cashcode/contracts';

/** The route parameter that carries the chat id. */
export const CHAT_ID_PARAM = 'id';

/** Matches `` (the chat page) and `chat/<id>` (a chat); nothing else. */
export function chatUrlMatcher(segments: UrlSegment[], _group?: unknown, _route?: Route): UrlMatchResult | null {
  if (segments.length === 0) return { consumed: [] };
  if (segments.length === 2 && segments[0].path === 'chat') {
    return { consumed: segments, posParams: { [CHAT_ID_PARAM]: segments[1] } };
  }
  return null;
}

/** The URL of a chat. */
export function chatUrl(chatId: string): string {
  return `/chat/${encodeURIComponent(chatId)}`;
}

/** A chat id from the URL, or null when it cannot be one (an invalid id is shown as not found). */
export function validChatId(value: string | null): string | null {
  return value !== null && CHAT_ID_PATTERN.test(value) ? value : null;
}

/** Whether a router URL shows the chat page (`/` or `/chat/<id>`). */
export function isChatUrl(url: string): boolean {
  const path = url.split(/[?#]/)[0];
  return path === '/' || path === '' || /^\/chat\/[^/]+$/.test(path);
}

export type ChatUrlAction =
  | { kind: 'none' }
  | { kind: 'open'; chatId: string }
  | { kind: 'newChat' }
  /** `urlId`: the chat the new URL names (null: `/`), to recognise the router landing there (`followed`) */
  | { kind: 'navigate'; url: string; urlId: string | null };

export interface ChatUrlInput {
  /** the chat named by the URL (null on `/`) */
  urlId: string | null;
  /** whether the URL changed since the last decision (false: the open chat changed) */
  urlChanged: boolean;
  /**
   * the URL change is this page's own `navigate` landing, not the user's. A navigation takes a few event-loop turns:
   * the open chat can change meanwhile (New chat's `attached` arrives), and the landing must not reopen the chat it
   * named (the next message would go there).
   */
  followed: boolean;
  /** the first decision of this page (a full page load or coming back from another page) */
  first: boolean;
  activeChatId: string | null;
  /** the open chat is a saved session (it has a URL) */
  activePersisted: boolean;
  /** a new chat was asked for and its id has not arrived yet */
  newChatPending: boolean;
}

/**
 * Keeps the URL and the open chat in step. A URL change wins: `/chat/<id>` opens that chat, an in-app move to `/`
 * (back/forward) starts a new chat. Otherwise the URL follows the open chat (replacing the entry): a saved chat gets
 * `/chat/<id>`, a chat without a session yet is `/`. The landing of such a move is no URL change of the user's: it only
 * makes the URL follow the chat open by then.
 */
export function decideChatUrl(input: ChatUrlInput): ChatUrlAction {
  const { urlId, activeChatId } = input;
  if (input.urlChanged && !input.followed) {
    if (urlId !== null) return urlId === activeChatId ? { kind: 'none' } : { kind: 'open', chatId: urlId };
    if (!input.first && !input.newChatPending && activeChatId !== null && input.activePersisted) return { kind: 'newChat' };
  }
  if (activeChatId === null || activeChatId === urlId || input.newChatPending) return { kind: 'none' };
  if (input.activePersisted) return { kind: 'navigate', url: chatUrl(activeChatId), urlId: activeChatId };
  return urlId !== null ? { kind: 'navigate', url: '/', urlId: null } : { kind: 'none' };
}
