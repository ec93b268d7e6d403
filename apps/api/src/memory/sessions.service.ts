/**
 * Sessions (openspec sessions): listing, the public message projection, rename and delete. A session is a non-hidden
 * chat directory of MEMORY_DIR.
 */
import {
  channelMessageSource,
  parseSkillReceipt,
  sanitizePersistedReceipts,
  type PublicMessage,
  type PublicToolRecord,
  type RenameSessionResponse,
  type SessionExportFormat,
  type SessionSearchResponse,
  type SessionSearchResult,
  type SessionListResponse,
  type SessionMessagesResponse,
} from '@cashcode/contracts';
import { Injectable, Logger } from '@nestjs/common';
import { AppEventBus } from '../events/event-bus';
import { argumentPreview } from '../common/argument-preview';
import { redactSecrets } from '../common/redact';
import { withoutModelHints } from '../common/model-hints';
import { firstCodePoints } from '../common/trim';
import { formatLocalIsoSeconds } from './local-time';
import { sessionExportJson, sessionExportMarkdown } from './session-export';
import { MemoryError } from './memory.errors';
import { ChatDirectoryStore } from './chat-directory.store';
import { ChatMetadataStore } from './chat-metadata.store';
import { HistoryReader } from './history-reader';
import { SessionIndex } from './session-index';
import { type HistoryRecord } from './memory.types';
import { currentBranch } from './history-branch';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';

export const UNTITLED_SESSION_TITLE = 'New chat';

/** Bound of a persisted tool result shown in a reopened chat (the live `tool_result.result` has the same bound). */
export const TOOL_RESULT_PREVIEW_MAX_CHARS = 200;

/**
 * openspec sessions "Requirement: Public message history": user and assistant records only; user rows keep their
 * re-sanitised selection receipts and the error marker of a failed turn. An explicit Skill receipt (`[Skill loaded:
 * …]`, persisted as an assistant record right after its user record) becomes `loaded_skills` data on that user row
 * instead of an assistant bubble. The tool calls of a turn (tool_calls and tool records) become `tools` on the
 * assistant row that follows them: arguments redacted and truncated like the live `tool_call`, results bounded.
 * Only the current branch is projected (history-branch.ts); each row carries the `cursor` of its record, the target
 * of an `edit` chat action.
 */
export function toPublicMessages(records: readonly HistoryRecord[]): PublicMessage[] {
  const messages: PublicMessage[] = [];
  let pendingTools: PublicToolRecord[] = [];
  // regenerate, edit and continue: only the current branch is shown (replaced records stay on disk)
  for (const record of currentBranch(records)) {
    const previous = messages[messages.length - 1];
    const skillReceipt = record.role === 'assistant' ? parseSkillReceipt(record.content) : null;
    if (skillReceipt && previous?.role === 'user') {
      (previous.loaded_skills ??= []).push(skillReceipt);
      continue;
    }
    if (record.role === 'user') {
      pendingTools = [];
      const message: PublicMessage = {
        role: 'user',
        content: record.content,
        ...sanitizePersistedReceipts(record),
        cursor: record.cursor,
      };
      const source = channelMessageSource(record.source);
      if (source) message.source = source;
      if (record.error) message.error = { kind: record.error.kind, message: record.error.message };
      if (record.attachments && record.attachments.length > 0) message.attachments = record.attachments.map((a) => ({ ...a }));
      messages.push(message);
    } else if (record.role === 'assistant') {
      const message: PublicMessage = { role: 'assistant', content: record.content, cursor: record.cursor };
      if (record.cancelled === true) message.cancelled = true;
      if (record.truncated === true) message.truncated = true;
      if (record.reasoning) message.reasoning = record.reasoning;
      if (record.usage) message.usage = { ...record.usage };
      if (record.cost) message.cost = { ...record.cost };
      if (typeof record.duration_ms === 'number') message.duration_ms = record.duration_ms;
      if (pendingTools.length > 0) message.tools = pendingTools;
      pendingTools = [];
      messages.push(message);
    } else if (record.role === 'tool_calls') {
      for (const call of record.tool_calls ?? []) {
        pendingTools.push({
          call_id: call.id,
          name: call.function.name,
          arguments: argumentPreview(call.function.arguments),
          result_preview: null,
          ok: null,
          duration_ms: null,
        });
      }
    } else if (record.role === 'tool') {
      const tool = pendingTools.find((entry) => entry.call_id === record.tool_call_id && entry.result_preview === null);
      if (tool) {
        tool.result_preview = firstCodePoints(redactSecrets(withoutModelHints(record.content)), TOOL_RESULT_PREVIEW_MAX_CHARS).text;
        tool.ok = typeof record.ok === 'boolean' ? record.ok : null;
        tool.duration_ms = typeof record.duration_ms === 'number' ? record.duration_ms : null;
      }
    }
  }
  return messages;
}

@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    private readonly chats: ChatDirectoryStore,
    private readonly metadata: ChatMetadataStore,
    private readonly history: HistoryReader,
    private readonly events: AppEventBus,
    private readonly index: SessionIndex,
  ) {}

  async list(): Promise<SessionListResponse> {
    const stored = await this.chats.listSessions();
    // newest first by instant (whole seconds, as emitted), ties by chat id; a string sort would break across DST
    const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
    const sorted = [...stored].sort((a, b) =>
      seconds(a.updatedAt) === seconds(b.updatedAt)
        ? a.chatId.localeCompare(b.chatId)
        : seconds(b.updatedAt) - seconds(a.updatedAt),
    );
    const sessions = sorted.map((session) => ({
      chat_id: session.chatId,
      title: session.title ?? UNTITLED_SESSION_TITLE,
      updated_at: formatLocalIsoSeconds(session.updatedAt),
      ...(session.channel ? { channel: { ...session.channel } } : {}),
    }));
    return { sessions };
  }

  async messages(chatId: string): Promise<SessionMessagesResponse> {
    if (!(await this.chats.chatExists(chatId))) throw new MemoryError('session_not_found');
    const records = await this.history.readRecords(chatId);
    return { chat_id: chatId, messages: toPublicMessages(records) };
  }

  /**
   * openspec sessions "Requirement: Search": chats whose title contains the query (case-insensitive), newest first,
   * then chats with a matching user or assistant message (the session index, BM25), best first; one row per chat.
   */
  async search(query: string, limit: number): Promise<SessionSearchResponse> {
    const { sessions } = await this.list();
    const needle = query.toLowerCase();
    const results: SessionSearchResult[] = [];
    const seen = new Set<string>();
    for (const session of sessions) {
      if (results.length >= limit) break;
      if (!session.title.toLowerCase().includes(needle)) continue;
      results.push({ ...session, match: 'title' });
      seen.add(session.chat_id);
    }
    if (results.length < limit) {
      const byId = new Map(sessions.map((session) => [session.chat_id, session]));
      for (const hit of await this.index.search(query, 20)) {
        if (results.length >= limit) break;
        const session = byId.get(hit.chatId);
        if (!session || seen.has(hit.chatId)) continue;
        seen.add(hit.chatId);
        results.push({ ...session, match: 'content', snippet: hit.snippet, role: hit.role });
      }
    }
    return { query, results };
  }

  /** openspec sessions "Requirement: Export": the projection of `messages`, as Markdown text or a JSON document. */
  async export(
    chatId: string,
    format: SessionExportFormat,
  ): Promise<{ format: 'markdown'; body: string } | { format: 'json'; body: ReturnType<typeof sessionExportJson> }> {
    const { messages } = await this.messages(chatId);
    const title = (await this.metadata.chatTitle(chatId)) ?? UNTITLED_SESSION_TITLE;
    const now = new Date();
    return format === 'json'
      ? { format, body: sessionExportJson(chatId, title, messages, now) }
      : { format, body: sessionExportMarkdown(chatId, title, messages, now) };
  }

  async rename(chatId: string, title: string): Promise<RenameSessionResponse> {
    const stored = await this.metadata.renameChat(chatId, title.trim());
    this.logger.log(`event=session.renamed chat_id=${chatId}`);
    return { chat_id: chatId, title: stored };
  }

  /** Removes the chat (disk and cache), then tells listeners (the chat module cancels a running turn). */
  async remove(chatId: string): Promise<void> {
    await this.chats.deleteChat(chatId);
    const event: SessionDeletedEvent = { chatId };
    try {
      this.events.emit(SESSION_DELETED_EVENT, event);
    } catch (error) {
      this.logger.error(
        `event=session.deleted.listener_failed chat_id=${chatId} error=${error instanceof Error ? error.name : 'unknown'}`,
      );
    }
  }
}
