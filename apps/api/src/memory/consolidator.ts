/**
 * Context compression (openspec memory). After each successful turn (`turn.completed`), in the background and never
 * delaying the next turn: when the chat's in-memory history exceeds the threshold (40,000 characters by default,
 * CASHCODE_CONSOLIDATION_THRESHOLD), the older half is summarised cumulatively with the turn's model, a `summary`
 * record with `keep_from_cursor` is appended (history.jsonl is never rewritten) and the cached history is reloaded
 * from disk on the chat's lane (summary + kept tail), so turns that finished meanwhile are kept.
 *
 * - The cut is at a user message, so a tool-call message is never separated from its tool results.
 * - At most one consolidation per chat at a time; a trigger while one runs is skipped (`busy`).
 * - A failure, timeout or empty answer changes nothing (the reference stored a placeholder summary instead).
 * - Repeated failures back off: from the second failure in a row, the chat's next 1, 2, 4 … (at most
 *   MAX_BACKOFF_TURNS) triggers are skipped (`backoff`), so a model that cannot summarise is not sent the whole
 *   history again after every turn. A consolidation that succeeds, or a restart, starts over.
 */
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppEventBus, OnAppEvent } from '../events/event-bus';
import type { LlmSelection } from '@cashcode/contracts';
import {
  CONSOLIDATION_FINISHED_EVENT,
  TURN_COMPLETED_EVENT,
  type ConsolidationFinishedEvent,
  type ConsolidationOutcome,
  type TurnCompletedEvent,
} from '../events/app-events';
import { logIds, type LogIds } from '../common/log-context';
import { untrustedSourcesOfMessages } from '../common/untrusted-sources';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { BackgroundModel, BackgroundModelError } from './background-model';
import { recordToMessage, SUMMARY_MESSAGE_PREFIX, summaryToMessage } from './history-record';
import { MemoryError } from './memory.errors';
import { HistoryLogStore } from './history-log.store';
import { type ChatMessage, type HistoryRecord } from './memory.types';

/** characters of one message given to the summariser (longer contents are cut) */
export const SUMMARY_INPUT_MAX_MESSAGE_CHARS = 4000;
/** characters of a tool result given to the summariser (the first 200, as the original server did) */
export const SUMMARY_INPUT_TOOL_CHARS = 200;

export const CONSOLIDATION_SYSTEM_PROMPT = [
  'You are a conversation summariser. The summary you write replaces the older part of a conversation in the',
  "assistant's context, so nothing important may be lost.",
  '',
  'Rules:',
  '- Keep every key fact: each question the user asked, the core of each answer, decisions that were made, and any',
  '  personal information the user shared (names, preferences, plans, constraints).',
  `- If the input contains an earlier summary (a message starting with "${SUMMARY_MESSAGE_PREFIX.trim()}"), integrate`,
  '  all of its content: extend it with the new content instead of replacing it.',
  '- Write in the third person ("The user asked …; the assistant explained …"), in chronological order.',
  '- Keep it concise: at most 800 words.',
  '- Output only the summary, without a preamble.',
].join('\n');

/** most triggers skipped after repeated consolidation failures of one chat */
export const MAX_BACKOFF_TURNS = 32;

/** A model message with the cursor of the record it came from (null for the summary message). */
export interface HistoryEntry {
  message: ChatMessage;
  cursor: number | null;
  timestamp: string;
}

export type ConsolidationPlan =
  | { kind: 'below_threshold' | 'nothing_to_compress'; size: number }
  | { kind: 'compress'; size: number; keepIndex: number; keepFromCursor: number };

/** Sum of the messages' content lengths (the "size" the threshold is compared with). */
export function historySize(messages: readonly ChatMessage[]): number {
  let size = 0;
  for (const message of messages) size += message.content.length;
  return size;
}

/**
 * The keep boundary: walking back from the end, the first index where the accumulated length reaches half the
 * size, moved forward to the next user message (or, past the end, back to the last user message). Everything before
 * it is summarised (including an earlier summary message: cumulative); the rest is kept.
 */
export function planConsolidation(entries: readonly HistoryEntry[], thresholdChars: number): ConsolidationPlan {
  const size = historySize(entries.map((entry) => entry.message));
  if (size < thresholdChars) return { kind: 'below_threshold', size };
  const target = Math.floor(size * 0.5);
  let accumulated = 0;
  let keepIndex = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    accumulated += entries[index]!.message.content.length;
    if (accumulated >= target) {
      keepIndex = index;
      break;
    }
  }
  while (keepIndex < entries.length && entries[keepIndex]!.message.role !== 'user') keepIndex++;
  if (keepIndex >= entries.length) {
    keepIndex = -1;
    for (let index = entries.length - 1; index >= 0; index--) {
      if (entries[index]!.message.role === 'user') {
        keepIndex = index;
        break;
      }
    }
  }
  // nothing before the boundary but (at most) the previous summary: summarising would only rewrite the summary
  const compressesRecords = entries.slice(0, Math.max(0, keepIndex)).some((entry) => entry.cursor !== null);
  const keepFromCursor = keepIndex >= 0 ? entries[keepIndex]!.cursor : null;
  if (keepIndex <= 0 || !compressesRecords || keepFromCursor === null) return { kind: 'nothing_to_compress', size };
  return { kind: 'compress', size, keepIndex, keepFromCursor };
}

/** The kept records (and last summary) of a chat as model messages with their cursors, as a smart load builds them. */
export function historyEntries(summary: HistoryRecord | null, records: readonly HistoryRecord[]): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  if (summary) {
    const message = summaryToMessage(summary);
    if (message) entries.push({ message, cursor: null, timestamp: summary.timestamp });
  }
  for (const record of records) {
    const message = recordToMessage(record);
    if (message) entries.push({ message, cursor: record.cursor, timestamp: record.timestamp });
  }
  return entries;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} …[truncated]` : text;
}

/** The summariser's user message: one line per message, `[timestamp] ROLE: content` (English labels, as the original server wrote them). */
export function formatForSummary(entries: readonly HistoryEntry[]): string {
  const lines: string[] = [];
  for (const { message, timestamp } of entries) {
    const prefix = timestamp ? `[${timestamp}] ` : '';
    if (message.role === 'tool') {
      if (message.content !== '') lines.push(`${prefix}TOOL_RESULT: ${clip(message.content, SUMMARY_INPUT_TOOL_CHARS)}`);
    } else if (message.content !== '') {
      lines.push(`${prefix}${message.role.toUpperCase()}: ${clip(message.content, SUMMARY_INPUT_MAX_MESSAGE_CHARS)}`);
    }
  }
  return lines.join('\n');
}

@Injectable()
export class Consolidator implements OnModuleDestroy {
  private readonly logger = new Logger(Consolidator.name);
  private readonly running = new Map<string, Promise<ConsolidationOutcome>>();
  /** chats whose last attempts failed: failures in a row and triggers still to skip */
  private readonly failures = new Map<string, { count: number; skip: number }>();
  private readonly shutdown = new AbortController();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: HistoryLogStore,
    private readonly model: BackgroundModel,
    private readonly events: AppEventBus,
  ) {}

  /** After a successful turn: start a background consolidation of that chat (never awaited by the turn). */
  @OnAppEvent(TURN_COMPLETED_EVENT)
  onTurnCompleted(event: TurnCompletedEvent): void {
    void this.consolidate(event.chatId, { provider: event.provider, model: event.model }, event.turnId);
  }

  /**
   * Consolidates the chat if needed; resolves with the outcome. A call while one runs for the chat is `busy`.
   * `turnId`: the turn that triggered it, for the log lines.
   */
  consolidate(chatId: string, selection: LlmSelection, turnId?: string): Promise<ConsolidationOutcome> {
    const ids = logIds({ chatId, turnId });
    if (this.running.has(chatId)) return this.finish(chatId, 'busy');
    const failing = this.failures.get(chatId);
    if (failing && failing.skip > 0) {
      failing.skip--;
      return this.finish(chatId, 'backoff');
    }
    const run = this.run(chatId, selection, ids)
      .catch((error: unknown): ConsolidationOutcome => {
        this.logger.error(
          formatEvent('memory.consolidation.crashed', {
            chat_id: chatId,
            error_type: error instanceof Error ? error.name : typeof error,
          }),
          ids,
        );
        return 'failed';
      })
      .finally(() => this.running.delete(chatId));
    this.running.set(chatId, run);
    return run;
  }

  /** Resolves when no consolidation is running (of that chat, or of any). */
  async whenIdle(chatId?: string): Promise<void> {
    for (;;) {
      const pending = chatId === undefined ? [...this.running.values()] : [this.running.get(chatId)];
      const active = pending.filter((p): p is Promise<ConsolidationOutcome> => p !== undefined);
      if (active.length === 0) return;
      await Promise.allSettled(active);
    }
  }

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  private async run(chatId: string, selection: LlmSelection, ids: LogIds): Promise<ConsolidationOutcome> {
    const threshold = this.config.consolidationThresholdChars;
    // cheap check on the cached history first: no disk read for a chat below the threshold
    const chat = await this.store.getChat(chatId);
    if (historySize(chat.history) < threshold) return this.finish(chatId, 'below_threshold');

    const { summary, records } = await this.store.readKeptTail(chatId);
    const entries = historyEntries(summary, records);
    const plan = planConsolidation(entries, threshold);
    if (plan.kind !== 'compress') return this.finish(chatId, plan.kind);

    const started = performance.now();
    const toCompress = entries.slice(0, plan.keepIndex);
    this.logger.log(
      formatEvent('memory.consolidation.started', {
        chat_id: chatId,
        size: plan.size,
        compress_messages: toCompress.length,
        keep_messages: entries.length - plan.keepIndex,
        provider: selection.provider,
        model: selection.model,
      }),
      ids,
    );
    let text: string;
    try {
      text = (
        await this.model.complete({
          purpose: 'consolidation',
          chatId,
          selection,
          system: CONSOLIDATION_SYSTEM_PROMPT,
          user: formatForSummary(toCompress),
          timeoutMs: this.config.backgroundModelTimeoutMs,
          signal: this.shutdown.signal,
        })
      ).trim();
    } catch (error) {
      const kind = error instanceof BackgroundModelError ? error.kind : 'internal';
      this.logger.warn(formatEvent('memory.consolidation.failed', { chat_id: chatId, kind, action: 'unchanged' }), ids);
      return this.finish(chatId, 'failed');
    }
    if (text === '') {
      this.logger.warn(
        formatEvent('memory.consolidation.failed', { chat_id: chatId, kind: 'empty_summary', action: 'unchanged' }),
        ids,
      );
      return this.finish(chatId, 'failed');
    }
    if (this.shutdown.signal.aborted) return this.finish(chatId, 'failed');
    try {
      // a summary of untrusted content stays untrusted: it keeps the marks of what it summarises
      const sources = untrustedSourcesOfMessages(toCompress.map((entry) => entry.message));
      await this.store.appendSummary(chatId, text, plan.keepFromCursor, sources);
    } catch (error) {
      const reason = error instanceof MemoryError ? error.code : error instanceof Error ? error.name : 'unknown';
      this.logger.warn(formatEvent('memory.consolidation.failed', { chat_id: chatId, kind: reason, action: 'unchanged' }), ids);
      return this.finish(chatId, 'failed');
    }
    // swap in summary + kept tail on the chat's lane: turns appended meanwhile are on disk and are kept
    const history = await this.store.reloadHistory(chatId);
    this.logger.log(
      formatEvent('memory.consolidation.completed', {
        chat_id: chatId,
        keep_from_cursor: plan.keepFromCursor,
        summary_chars: text.length,
        size_after: historySize(history),
        duration_ms: Math.round(performance.now() - started),
      }),
      ids,
    );
    return this.finish(chatId, 'consolidated', plan.keepFromCursor);
  }

  private finish(chatId: string, outcome: ConsolidationOutcome, keepFromCursor?: number): Promise<ConsolidationOutcome> {
    if (outcome === 'failed') {
      const failing = this.failures.get(chatId) ?? { count: 0, skip: 0 };
      failing.count++;
      failing.skip = failing.count < 2 ? 0 : Math.min(MAX_BACKOFF_TURNS, 2 ** (failing.count - 2));
      this.failures.set(chatId, failing);
    } else if (outcome !== 'busy' && outcome !== 'backoff') {
      this.failures.delete(chatId);
    }
    const event: ConsolidationFinishedEvent = { chatId, outcome };
    if (keepFromCursor !== undefined) event.keepFromCursor = keepFromCursor;
    try {
      this.events.emit(CONSOLIDATION_FINISHED_EVENT, event);
    } catch {
      // a failing listener must not break consolidation
    }
    return Promise.resolve(outcome);
  }
}
