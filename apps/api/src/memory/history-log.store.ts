/**
 * HistoryLogStore: a chat's conversation as the turn path sees it (openspec memory) — the smart-loaded model context
 * with the chat's metadata, the appends of a turn (plain, failed, continued, or replacing a branch), consolidation
 * summaries, and the reads a regenerate or a consolidation needs.
 *
 * It implements the agent's HistoryLog (agent/history-log.ts) structurally: memory sits below agent and never imports
 * it; AgentModule binds this class to the HISTORY_LOG token. Every operation on one chat runs on that chat's lane
 * (chat-file-lanes.ts), shared with the metadata and artifact stores: that is where history is locked.
 */
import type { UntrustedSource } from '@cashcode/contracts';
import { Injectable } from '@nestjs/common';
import { assertChatId } from './chat-files';
import { ChatFileLanes } from './chat-file-lanes';
import { ChatMetadataStore } from './chat-metadata.store';
import { HistoryReader } from './history-reader';
import { answerRecords, failedTurnRecord, recordToMessage, summaryToMessage, turnRecords, type PendingRecord } from './history-record';
import { HistoryWriter } from './history-writer';
import { MemoryError } from './memory.errors';
import type {
  AppendOptions,
  ChatMessage,
  ChatMetadata,
  ChatState,
  FinalAnswer,
  HistoryRecord,
  TurnErrorMarker,
  UserTurnInput,
} from './memory.types';

/** The records with `supersedes` set on the first one when the append replaces earlier records. */
function branched(records: PendingRecord[], options: AppendOptions): PendingRecord[] {
  if (options.supersedes === undefined || records.length === 0) return records;
  return [{ ...records[0]!, supersedes: options.supersedes }, ...records.slice(1)];
}

@Injectable()
export class HistoryLogStore {
  /** loads in flight, so that concurrent getChat calls of one chat share one read */
  private readonly loading = new Map<string, Promise<ChatState>>();

  constructor(
    private readonly lanes: ChatFileLanes,
    private readonly reader: HistoryReader,
    private readonly writer: HistoryWriter,
    private readonly metadata: ChatMetadataStore,
  ) {}

  /**
   * The chat's smart-loaded history and metadata, loaded once per process and cached. Does not create anything
   * on disk; an unknown chat is an empty state.
   */
  async getChat(chatId: string): Promise<ChatState> {
    assertChatId(chatId);
    this.lanes.revive(chatId);
    const cached = this.lanes.use(chatId);
    if (cached) return cached;
    const inFlight = this.loading.get(chatId);
    if (inFlight) return inFlight;
    const load = this.lanes.run(chatId, async () => {
      const existing = this.lanes.cached(chatId);
      if (existing) return existing;
      const [history, metadata] = await Promise.all([this.reader.smartLoad(chatId), this.metadata.read(chatId)]);
      const state: ChatState = { chatId, history: history.messages, metadata };
      this.lanes.remember(chatId, state);
      return state;
    });
    this.loading.set(chatId, load);
    try {
      return await load;
    } finally {
      this.loading.delete(chatId);
    }
  }

  /** Drops the cached state of a chat; the next getChat reads it from disk again. */
  forgetChat(chatId: string): void {
    this.lanes.forget(chatId);
  }

  /** Re-reads the chat's history from disk into the cached state (after a consolidation summary was appended). */
  async reloadHistory(chatId: string): Promise<ChatMessage[]> {
    assertChatId(chatId);
    return this.lanes.run(chatId, async () => {
      const history = await this.reader.smartLoad(chatId);
      const cached = this.lanes.cached(chatId);
      if (cached) cached.history = history.messages;
      return history.messages;
    });
  }

  /** Writes metadata.json on the chat's lane (chat-metadata.store.ts); the cached state takes the same object. */
  saveMetadata(chatId: string, metadata: ChatMetadata): Promise<void> {
    return this.metadata.save(chatId, metadata);
  }

  /**
   * Persists one turn (openspec memory) as a single append of complete lines with consecutive cursors, then extends the
   * cached history with the same messages a reload would produce. Resolves once the lines are on disk.
   * Returns the records written (none when the chat was deleted while the turn ran).
   */
  async appendTurn(
    chatId: string,
    user: UserTurnInput,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options: AppendOptions = {},
  ): Promise<HistoryRecord[]> {
    assertChatId(chatId);
    const records = branched(turnRecords(user, durable, final), options);
    return this.writer.append(chatId, records, { extendCache: true, inline: options.inline === true });
  }

  /**
   * Persists the continuation of a stopped answer (openspec sessions "Requirement: Regenerate, edit and continue"): the
   * turn's durable messages and the continued answer, without a user record; the first record supersedes the stopped
   * answer at `options.supersedes`.
   */
  async appendContinuation(
    chatId: string,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options: AppendOptions & { supersedes: number },
  ): Promise<HistoryRecord[]> {
    assertChatId(chatId);
    const records = branched(answerRecords(durable, final), options);
    return this.writer.append(chatId, records, { extendCache: true, inline: options.inline === true });
  }

  /**
   * Persists the user message of a failed turn with its error marker (openspec sessions). The cached history is not
   * extended: the record is not part of the model context. Returns the record written (none for a deleted chat).
   */
  async appendFailedTurn(
    chatId: string,
    user: UserTurnInput,
    error: TurnErrorMarker,
    options: AppendOptions = {},
  ): Promise<HistoryRecord[]> {
    assertChatId(chatId);
    const records = branched([failedTurnRecord(user, error)], options);
    // a failed edit or regenerate still replaces what it was sent for: the cached context is re-read
    return this.writer.append(chatId, records, { extendCache: options.supersedes !== undefined, inline: options.inline === true });
  }

  /** Appends a consolidation summary record (openspec memory); call reloadHistory afterwards. */
  async appendSummary(
    chatId: string,
    content: string,
    keepFromCursor: number | null,
    untrustedSources: readonly UntrustedSource[] = [],
  ): Promise<HistoryRecord> {
    assertChatId(chatId);
    const record: PendingRecord = { role: 'summary', content };
    if (keepFromCursor !== null) record.keep_from_cursor = keepFromCursor;
    if (untrustedSources.length > 0) record.untrusted_sources = [...untrustedSources];
    const [written] = await this.writer.append(chatId, [record], { extendCache: false, inline: false });
    if (!written) throw new MemoryError('session_not_found');
    return written;
  }

  /** Every valid record of the chat in file order (torn tail dropped, malformed lines skipped and logged). */
  readRecords(chatId: string): Promise<HistoryRecord[]> {
    return this.reader.readRecords(chatId);
  }

  /**
   * The model context of the current branch before `cursor` (the summary message first when consolidated): what a
   * regenerated or edited message is answered with.
   */
  async historyBefore(chatId: string, cursor: number): Promise<ChatMessage[]> {
    assertChatId(chatId);
    return this.lanes.run(chatId, async () => {
      const loaded = await this.reader.smartLoad(chatId);
      const messages: ChatMessage[] = [];
      const summary = loaded.summary ? summaryToMessage(loaded.summary) : null;
      if (summary) messages.push(summary);
      for (const record of loaded.records) {
        if (record.cursor >= cursor) break;
        const message = recordToMessage(record);
        if (message) messages.push(message);
      }
      return messages;
    });
  }

  /**
   * The records a smart load keeps (openspec memory): the last summary (or null) and every later kept non-summary
   * record, in file order, read from the end of the file on the chat's lane. The cached history equals the summary
   * message followed by these records as messages; the consolidator uses it to know the cursor of each message.
   */
  async readKeptTail(chatId: string): Promise<{ summary: HistoryRecord | null; records: HistoryRecord[] }> {
    assertChatId(chatId);
    return this.lanes.run(chatId, async () => {
      const loaded = await this.reader.smartLoad(chatId);
      return { summary: loaded.summary, records: loaded.records };
    });
  }

  /** Resolves when every operation queued so far (on all chats, or on one) has finished, due .cursor hints included. */
  flush(chatId?: string): Promise<void> {
    return this.writer.flush(chatId);
  }
}
