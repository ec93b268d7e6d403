/**
 * Per-chat activation sets of MCP tools (openspec mcp) and of the deferred built-in tools (agent-tool.ts `deferred`):
 * `{tool: last_used_epoch_seconds}` in the chat's metadata.json `activated_tools`, an LRU of at most 50 tools (the
 * oldest timestamp is evicted). tool_search and mcp_prepare activate, and so do a deferred tool's direct call and the
 * owner's message naming one; each execution of an activated tool refreshes its timestamp; disconnect/update/delete
 * of a server purge its tools from every chat, loaded or on disk. Reads are synchronous (the registry asks per model call); a chat's set
 * is loaded from HistoryLogStore on first use (`hydrate`, awaited by the MCP tools and by
 * McpTurnPreparation.prepareTurn) and written back through HistoryLogStore.saveMetadata on the shared metadata object,
 * one write per chat at a time.
 */
import { isRecord } from '@cashcode/contracts';
import { Injectable, Logger } from '@nestjs/common';
import { OnAppEvent } from '../events/event-bus';
import { formatEvent } from '../common/log-format';
import type { ToolActivationSource } from '../agent/tool-registry';
import { ChatDirectoryStore } from '../memory/chat-directory.store';
import { HistoryLogStore } from '../memory/history-log.store';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';
import { KeyedQueue } from '../common/keyed-queue';

export const ACTIVATION_CAPACITY = 50;
/** chats scanned in parallel by a purge */
const PURGE_CONCURRENCY = 4;
/** activation sets kept in memory; the least recently used clean ones are dropped beyond this */
const MAX_LOADED_CHATS = 2000;

@Injectable()
export class McpActivations implements ToolActivationSource {
  private readonly logger = new Logger(McpActivations.name);
  /** chat → (tool → last used, epoch seconds), most recently used chat last */
  private readonly sets = new Map<string, Map<string, number>>();
  private readonly hydrating = new Map<string, Promise<Map<string, number>>>();
  /** one metadata write per chat at a time */
  private readonly lanes = new KeyedQueue();
  private readonly dirty = new Set<string>();
  /** the clock, seconds since the epoch (tests may replace it) */
  now: () => number = () => Date.now() / 1000;

  constructor(
    private readonly memory: HistoryLogStore,
    private readonly chats: ChatDirectoryStore,
  ) {}

  // ---------------------------------------------------------------------------------- ToolActivationSource

  isActivated(chatId: string, toolName: string): boolean {
    const set = this.sets.get(chatId);
    if (!set) {
      void this.hydrate(chatId).catch(() => undefined);
      return false;
    }
    return set.has(toolName);
  }

  touch(chatId: string, toolName: string): void {
    const set = this.sets.get(chatId);
    if (!set || !set.has(toolName)) return;
    set.set(toolName, this.now());
    this.persistSoon(chatId);
  }

  // ---------------------------------------------------------------------------------- API

  /** Loads the chat's set from its metadata (once per process; concurrent calls share the read). */
  async hydrate(chatId: string): Promise<Map<string, number>> {
    const known = this.sets.get(chatId);
    if (known) {
      this.sets.delete(chatId);
      this.sets.set(chatId, known);
      return known;
    }
    let pending = this.hydrating.get(chatId);
    if (!pending) {
      pending = (async () => {
        const state = await this.memory.getChat(chatId);
        const stored = state.metadata.activated_tools;
        const set = new Map<string, number>();
        if (isRecord(stored)) {
          for (const [tool, used] of Object.entries(stored)) {
            if (typeof used === 'number' && Number.isFinite(used)) set.set(tool, used);
          }
        }
        const raced = this.sets.get(chatId);
        if (raced) return raced;
        this.sets.set(chatId, set);
        this.trimLoaded();
        return set;
      })().finally(() => this.hydrating.delete(chatId));
      this.hydrating.set(chatId, pending);
    }
    return pending;
  }

  /** Activates tools for a chat (refreshing the ones already active) and persists the set. */
  async activate(chatId: string, tools: readonly string[]): Promise<void> {
    if (tools.length === 0) return;
    const set = await this.hydrate(chatId);
    const now = this.now();
    // a tool already active keeps its place (only its timestamp is refreshed): the tool list the model sees stays in
    // activation order, so a chat's request prefix does not change when a tool is activated again
    for (const tool of tools) set.set(tool, now);
    this.evict(set);
    await this.persist(chatId);
  }

  /** The chat's active tools (after hydrate), in the order they were first activated. */
  activeTools(chatId: string): string[] {
    return [...(this.sets.get(chatId)?.keys() ?? [])];
  }

  /** Removes tool names from every chat's set, loaded or on disk (disconnect / update / delete of a server). */
  async purge(toolNames: ReadonlySet<string>): Promise<number> {
    if (toolNames.size === 0) return 0;
    let changed = 0;
    const loadedBefore = new Set(this.sets.keys());
    const visit = async (chatId: string) => {
      const set = await this.hydrate(chatId);
      let removed = false;
      for (const name of toolNames) removed = set.delete(name) || removed;
      if (removed) {
        changed++;
        await this.persist(chatId);
      }
      if (!loadedBefore.has(chatId) && !this.dirty.has(chatId)) this.sets.delete(chatId);
    };
    const chats = new Set<string>(loadedBefore);
    try {
      for (const session of await this.chats.listSessions()) chats.add(session.chatId);
    } catch (error) {
      this.logger.warn(formatEvent('mcp.activations.purge_list_failed', { error: (error as Error).name }));
    }
    const queue = [...chats];
    const worker = async () => {
      for (let chatId = queue.shift(); chatId !== undefined; chatId = queue.shift()) {
        try {
          await visit(chatId);
        } catch (error) {
          this.logger.warn(formatEvent('mcp.activations.purge_failed', { chat_id: chatId, error: (error as Error).name }));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PURGE_CONCURRENCY, queue.length) }, worker));
    if (changed > 0) this.logger.log(formatEvent('mcp.activations.purged', { tools: toolNames.size, chats: changed }));
    return changed;
  }

  /** Waits for pending writes (tests, shutdown). */
  async flush(): Promise<void> {
    await this.lanes.settled();
  }

  @OnAppEvent(SESSION_DELETED_EVENT)
  onSessionDeleted(event: SessionDeletedEvent): void {
    this.sets.delete(event.chatId);
    this.dirty.delete(event.chatId);
  }

  // ---------------------------------------------------------------------------------- internals

  private evict(set: Map<string, number>): void {
    while (set.size > ACTIVATION_CAPACITY) {
      let oldest: string | undefined;
      let oldestAt = Infinity;
      for (const [tool, used] of set) {
        if (used < oldestAt) {
          oldest = tool;
          oldestAt = used;
        }
      }
      if (oldest === undefined) break;
      set.delete(oldest);
    }
  }

  private trimLoaded(): void {
    if (this.sets.size <= MAX_LOADED_CHATS) return;
    for (const chatId of this.sets.keys()) {
      if (this.sets.size <= MAX_LOADED_CHATS) break;
      if (!this.dirty.has(chatId) && !this.lanes.isBusy(chatId)) this.sets.delete(chatId);
    }
  }

  private persistSoon(chatId: string): void {
    void this.persist(chatId).catch(() => undefined);
  }

  /** Writes the chat's set into its metadata.json (through HistoryLogStore), after any write already queued. */
  private persist(chatId: string): Promise<void> {
    this.dirty.add(chatId);
    const run = this.lanes.run(chatId, async () => {
      if (!this.dirty.has(chatId)) return;
      this.dirty.delete(chatId);
      const set = this.sets.get(chatId);
      if (!set) return;
      const state = await this.memory.getChat(chatId);
      const had = isRecord(state.metadata.activated_tools);
      if (!had && set.size === 0) return;
      state.metadata.activated_tools = Object.fromEntries(set);
      await this.memory.saveMetadata(chatId, state.metadata);
    });
    run.catch((error: unknown) => {
      this.logger.warn(formatEvent('mcp.activations.save_failed', { chat_id: chatId, error: (error as Error).name }));
    });
    return run;
  }
}
