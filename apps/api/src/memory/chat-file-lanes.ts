/**
 * ChatFileLanes: the per-chat lock of the memory stores, and what the process keeps of each chat between operations.
 *
 * Every operation on one chat's files — load, append, metadata write, artifact write, delete — runs on that chat's
 * lane (a KeyedQueue keyed by chat id): one writer per chat, and a load never interleaves with an append. The stores
 * share one ChatFileLanes, so an append (history-log.store.ts) and a metadata write (chat-metadata.store.ts) of the same
 * chat are ordered too. Loaded chats are cached here (least recently used evicted, never one with work queued), and a
 * deleted chat is marked so that a late write of a turn that was still running never brings it back. (The chat's turns
 * have lanes of their own, chat/chat-lanes.ts; these order the file operations.)
 */
import { Injectable } from '@nestjs/common';
import { KeyedQueue } from '../common/keyed-queue';
import type { ChatState } from './memory.types';

@Injectable()
export class ChatFileLanes {
  private readonly queue = new KeyedQueue<string>();
  /** loaded chats, least recently used first */
  private readonly states = new Map<string, ChatState>();
  /** chats deleted since their last load (see markDeleted) */
  private readonly deleted = new Set<string>();
  /** loaded chats kept in memory; the least recently used idle ones are evicted beyond this */
  maxCachedChats = 1000;

  /** Runs `task` on the chat's lane, after every earlier operation on that chat (whether it failed or not). */
  run<T>(chatId: string, task: () => Promise<T>): Promise<T> {
    return this.queue.run(chatId, task);
  }

  /** Whether the chat has an operation queued or running (its cached state and open files are in use). */
  isBusy(chatId: string): boolean {
    return this.queue.isBusy(chatId);
  }

  /** Whether any chat (or the given one) has an operation queued or running. */
  anyBusy(chatId?: string): boolean {
    return chatId === undefined ? this.queue.busyKeys().length > 0 : this.queue.isBusy(chatId);
  }

  /** Resolves when every operation queued so far (on all chats, or on one) has settled. */
  settled(chatId?: string): Promise<void> {
    return this.queue.settled(chatId);
  }

  /** The chat's cached state, without counting as a use. */
  cached(chatId: string): ChatState | undefined {
    return this.states.get(chatId);
  }

  /** The chat's cached state, now the most recently used. */
  use(chatId: string): ChatState | undefined {
    const state = this.states.get(chatId);
    if (state) {
      this.states.delete(chatId);
      this.states.set(chatId, state);
    }
    return state;
  }

  /** Caches a loaded chat, evicting the least recently used idle chats beyond maxCachedChats. */
  remember(chatId: string, state: ChatState): void {
    this.states.set(chatId, state);
    if (this.states.size <= this.maxCachedChats) return;
    for (const id of this.states.keys()) {
      if (this.states.size <= this.maxCachedChats) break;
      if (id !== chatId && !this.queue.isBusy(id)) this.states.delete(id);
    }
  }

  /** Drops the chat's cached state; the next load reads it from disk again. */
  forget(chatId: string): void {
    this.states.delete(chatId);
  }

  /** The chat was deleted: later writes of it are dropped until it is loaded again (a new conversation). */
  markDeleted(chatId: string): void {
    this.deleted.add(chatId);
  }

  /** Whether the chat was deleted since its last load; a write that finds it so writes nothing. */
  isDeleted(chatId: string): boolean {
    return this.deleted.has(chatId);
  }

  /** A load of the chat starts a new conversation under its id: writes are accepted again. */
  revive(chatId: string): void {
    this.deleted.delete(chatId);
  }
}
