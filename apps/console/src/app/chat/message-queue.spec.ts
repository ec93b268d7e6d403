import { isRecallKey, lastUserText } from './composer-recall';
import type { ChatMessage } from './chat-types';
import { NO_SELECTIONS } from './capability-picker/capability-rules';
import { EMPTY_QUEUE, enqueueMessage, nextToSend, queuedFor, removeQueued } from './message-queue';
import { shortcutAction, type ShortcutKeyEvent } from './shortcuts';

const key = (over: Partial<ShortcutKeyEvent>): ShortcutKeyEvent => ({
  key: '',
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  altKey: false,
  isComposing: false,
  keyCode: 0,
  defaultPrevented: false,
  ...over,
});
const idle = { typing: false, generating: false, overlayOpen: false };

describe('message queue', () => {
  it('Scenario: a message sent while an answer streams is queued, removable, and sent when the turn ends', () => {
    let state = enqueueMessage(EMPTY_QUEUE, 'c1', 'first', NO_SELECTIONS);
    state = enqueueMessage(state, 'c1', 'second', NO_SELECTIONS);
    state = enqueueMessage(state, 'c2', 'elsewhere', NO_SELECTIONS);
    expect(queuedFor(state, 'c1').map((m) => m.text)).toEqual(['first', 'second']);
    expect(nextToSend(state, 'c1', 'done')?.text).toBe('first');
    const first = queuedFor(state, 'c1')[0];
    state = removeQueued(state, 'c1', first.id);
    expect(queuedFor(state, 'c1').map((m) => m.text)).toEqual(['second']);
    expect(queuedFor(state, 'c2').map((m) => m.text)).toEqual(['elsewhere']);
    expect(removeQueued(state, 'c1', 999)).toBe(state);
    state = removeQueued(state, 'c1', queuedFor(state, 'c1')[0].id);
    expect(state.byChat['c1']).toBeUndefined();
    expect(nextToSend(state, 'c1', 'done')).toBeNull();
  });

  it('Scenario: a turn that fails keeps the queued message until the user decides', () => {
    const state = enqueueMessage(EMPTY_QUEUE, 'c1', 'next', NO_SELECTIONS);
    expect(nextToSend(state, 'c1', 'error')).toBeNull();
    expect(queuedFor(state, 'c1')).toHaveLength(1);
  });
});

describe('shortcuts', () => {
  it('Scenario: keyboard shortcuts map to their actions', () => {
    expect(shortcutAction(key({ key: 'O', ctrlKey: true, shiftKey: true }), idle)).toBe('newChat');
    expect(shortcutAction(key({ key: 'o', metaKey: true, shiftKey: true }), idle)).toBe('newChat');
    expect(shortcutAction(key({ key: 'k', ctrlKey: true }), idle)).toBe('focusSearch');
    expect(shortcutAction(key({ key: '/', ctrlKey: true }), idle)).toBe('help');
    expect(shortcutAction(key({ key: '?', shiftKey: true }), idle)).toBe('help');
    // a `?` typed in the composer is text
    expect(shortcutAction(key({ key: '?', shiftKey: true }), { ...idle, typing: true })).toBeNull();
    // Esc stops only a running answer, and not when a dialog or menu has it
    expect(shortcutAction(key({ key: 'Escape' }), { ...idle, generating: true })).toBe('stop');
    expect(shortcutAction(key({ key: 'Escape' }), idle)).toBeNull();
    expect(shortcutAction(key({ key: 'Escape' }), { ...idle, generating: true, overlayOpen: true })).toBeNull();
    expect(shortcutAction(key({ key: 'Escape', defaultPrevented: true }), { ...idle, generating: true })).toBeNull();
    expect(shortcutAction(key({ key: 'k' }), idle)).toBeNull();
  });

  it('Scenario: no shortcut fires during an IME composition', () => {
    expect(shortcutAction(key({ key: 'Escape', isComposing: true }), { ...idle, generating: true })).toBeNull();
    expect(shortcutAction(key({ key: 'k', ctrlKey: true, keyCode: 229 }), idle)).toBeNull();
    expect(isRecallKey(key({ key: 'ArrowUp', isComposing: true }), '')).toBe(false);
  });

  it('Scenario: ↑ in an empty composer puts the last user message back', () => {
    expect(isRecallKey(key({ key: 'ArrowUp' }), '')).toBe(true);
    expect(isRecallKey(key({ key: 'ArrowUp' }), 'typed')).toBe(false);
    expect(isRecallKey(key({ key: 'ArrowUp', shiftKey: true }), '')).toBe(false);
    const message = (role: 'user' | 'assistant', content: string): ChatMessage => ({
      id: 1,
      role,
      content,
      streaming: false,
      tools: [],
      cancelled: false,
    });
    expect(lastUserText([message('user', 'one'), message('assistant', 'a'), message('user', 'two'), message('assistant', 'b')])).toBe('two');
    expect(lastUserText([message('assistant', 'a')])).toBeNull();
  });
});
