/**
 * Keyboard shortcuts of the chat page (openspec console "Requirement: Keyboard shortcuts"): Ctrl/Cmd+Shift+O new
 * chat, Ctrl/Cmd+K focus the chat search, Esc stop the running answer, `?` (outside a text field) or Ctrl/Cmd+/ the
 * list of shortcuts. ↑ in an empty composer is handled by the composer itself. Never during an IME composition.
 */
import type { MessageKey } from '../core/i18n/i18n';

export type ShortcutAction = 'newChat' | 'focusSearch' | 'stop' | 'help' | null;

export interface ShortcutKeyEvent {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  isComposing: boolean;
  keyCode: number;
  defaultPrevented: boolean;
}

export interface ShortcutContext {
  /** focus is in a text field (a `?` there is typed, not a shortcut) */
  typing: boolean;
  generating: boolean;
  /** a dialog or menu is open (Esc belongs to it) */
  overlayOpen: boolean;
}

export function shortcutAction(event: ShortcutKeyEvent, context: ShortcutContext): ShortcutAction {
  if (event.isComposing || event.keyCode === 229 || event.defaultPrevented) return null;
  const mod = event.ctrlKey || event.metaKey;
  const key = event.key.toLowerCase();
  if (mod && event.shiftKey && !event.altKey && key === 'o') return 'newChat';
  if (mod && !event.shiftKey && !event.altKey && key === 'k') return 'focusSearch';
  if (mod && !event.altKey && key === '/') return 'help';
  if (!mod && !event.altKey && key === '?' && !context.typing) return 'help';
  if (key === 'escape' && !mod && context.generating && !context.overlayOpen) return 'stop';
  return null;
}

/** The shortcuts the help dialog lists: keys (as shown) and what they do. */
export const SHORTCUT_LIST: ReadonlyArray<{ keys: string[]; label: MessageKey }> = [
  { keys: ['Ctrl/⌘', 'Shift', 'O'], label: 'shortcuts.newChat' },
  { keys: ['Ctrl/⌘', 'K'], label: 'shortcuts.focusSearch' },
  { keys: ['Esc'], label: 'shortcuts.stop' },
  { keys: ['↑'], label: 'shortcuts.editLast' },
  { keys: ['Enter'], label: 'shortcuts.send' },
  { keys: ['Shift', 'Enter'], label: 'shortcuts.newLine' },
  { keys: ['?'], label: 'shortcuts.help' },
  { keys: ['Ctrl/⌘', '/'], label: 'shortcuts.help' },
];
