/**
 * HistoryLog: a chat's persisted conversation as a turn reads and writes it (openspec memory, sessions). A turn starts
 * from `getChat` (the smart-loaded model context and the chat's metadata), or from `historyBefore` when it replaces a
 * message (regenerate, edit); it ends with one append: the turn, its continuation, or the failed user message.
 *
 * Locking: every operation on one chat runs on that chat's lane, in the order it was called (one writer per chat; a
 * load never interleaves with an append; metadata writes are ordered with the appends). Different chats never wait
 * for each other. An append resolves once its lines are on disk, and writes nothing for a chat deleted meanwhile.
 *
 * Implemented by `memory/history-log.store.ts` (HistoryLogStore; the lanes are `memory/chat-file-lanes.ts`), which never
 * imports agent code: it fits this interface structurally and AgentModule binds it to HISTORY_LOG.
 */
import type {
  AppendOptions,
  ChatMessage,
  ChatMetadata,
  ChatState,
  FinalAnswer,
  HistoryRecord,
  TurnErrorMarker,
  UserTurnInput,
} from '../memory/memory.types';

/** Injection token of the HistoryLog (bound in AgentModule). */
export const HISTORY_LOG = Symbol('HistoryLog');

export interface HistoryLog {
  /** The chat's model context and metadata, loaded once per process and cached; an unknown chat is empty. */
  getChat(chatId: string): Promise<ChatState>;
  /** The model context of the current branch before `cursor`: what a regenerated or edited message is answered with. */
  historyBefore(chatId: string, cursor: number): Promise<ChatMessage[]>;
  /** Every valid record of the chat in file order (what a chat action is planned against). */
  readRecords(chatId: string): Promise<HistoryRecord[]>;
  /** Writes the chat's metadata (atomically); the cached state takes the same object. */
  saveMetadata(chatId: string, metadata: ChatMetadata): Promise<void>;
  /** Appends one turn (user, tool activity, answer) and extends the cached context; returns the records written. */
  appendTurn(
    chatId: string,
    user: UserTurnInput,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options?: AppendOptions,
  ): Promise<HistoryRecord[]>;
  /** Appends the continuation of a stopped answer, replacing it (no user record). */
  appendContinuation(
    chatId: string,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    options: AppendOptions & { supersedes: number },
  ): Promise<HistoryRecord[]>;
  /** Appends the user message of a failed turn with its error marker (not part of the model context). */
  appendFailedTurn(
    chatId: string,
    user: UserTurnInput,
    error: TurnErrorMarker,
    options?: AppendOptions,
  ): Promise<HistoryRecord[]>;
}
