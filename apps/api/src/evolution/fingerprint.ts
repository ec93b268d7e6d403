/**
 * The workflow fingerprint (openspec skill-evolution "Requirement: Workflow fingerprint"): turns asking for "the same
 * kind of thing" with the same set of tools share it, whatever the numbers, spacing or letter case of the request.
 */
import { createHash } from 'node:crypto';

/** Code points of the normalised request that enter the fingerprint. */
export const FINGERPRINT_TEXT_MAX = 500;

/** A run of digits not attached to a letter, digit or underscore (Python's `\b\d+\b` on Unicode text). */
const STANDALONE_DIGITS = /(?<![\p{L}\p{N}\p{M}_])\p{Nd}+(?![\p{L}\p{N}\p{M}_])/gu;
const WHITESPACE = /\s+/gu;

/** Lower-cased, standalone digit runs → `#`, whitespace collapsed, trimmed, at most 500 code points. */
export function normaliseRequestText(text: string): string {
  const normalised = text.toLowerCase().replace(STANDALONE_DIGITS, '#').replace(WHITESPACE, ' ').trim();
  const chars = Array.from(normalised);
  return chars.length > FINGERPRINT_TEXT_MAX ? chars.slice(0, FINGERPRINT_TEXT_MAX).join('') : normalised;
}

/** First 24 hex of sha256(`<normalised request>|<sorted unique tool names joined by |>`). */
export function workflowFingerprint(request: string, toolNames: readonly string[]): string {
  const tools = [...new Set(toolNames)].sort();
  return createHash('sha256')
    .update(`${normaliseRequestText(request)}|${tools.join('|')}`, 'utf8')
    .digest('hex')
    .slice(0, 24);
}

/** First 12 hex of sha256(chat id): evidence never stores the chat id itself. */
export function chatIdHash(chatId: string): string {
  return createHash('sha256').update(chatId, 'utf8').digest('hex').slice(0, 12);
}
