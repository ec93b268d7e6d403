import { codePointLength, SESSION_SEARCH_QUERY_MAX_CHARS } from '@cashcode/contracts';

/** delay between the last key press and the search request */
export const SESSION_SEARCH_DEBOUNCE_MS = 250;

/**
 * What the sidebar's search box sends (openspec console "Requirement: Search chats"): the trimmed text, or null when
 * it is blank (the normal session list is shown) or longer than the server accepts (cut to the limit instead).
 */
export function sessionSearchQuery(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (codePointLength(trimmed) <= SESSION_SEARCH_QUERY_MAX_CHARS) return trimmed;
  return Array.from(trimmed).slice(0, SESSION_SEARCH_QUERY_MAX_CHARS).join('').trim();
}
