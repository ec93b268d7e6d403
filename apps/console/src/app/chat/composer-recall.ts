/**
 * ↑ in an empty composer puts the open chat's last user message back in the composer for editing (openspec console
 * "Requirement: Keyboard shortcuts"). An edit-and-resend feature can hook in here; for now it fills the composer.
 */
import type { ChatMessage } from './chat-types';

/** Plain ↑ (no modifier, no IME composition) in a composer with nothing typed. */
export function isRecallKey(
  event: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey' | 'isComposing' | 'keyCode'>,
  text: string,
): boolean {
  return (
    event.key === 'ArrowUp' &&
    !event.shiftKey &&
    !event.ctrlKey &&
    !event.metaKey &&
    !event.altKey &&
    !event.isComposing &&
    event.keyCode !== 229 &&
    text === ''
  );
}

/** The text of the last user message of a chat, or null when it has none. */
export function lastUserText(messages: readonly ChatMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') return messages[i].content;
  }
  return null;
}
