/**
 * What a chat turn writes, and when. Before the turn: the fallback title of an untitled chat (kept even when the turn
 * fails). After it: the turn's records in one append (a plain turn, a regenerated or edited one that supersedes the
 * old records, or a continuation that replaces the stopped answer), with the answer's usage, cost and duration; a
 * cancelled turn the same way, marked cancelled; a turn whose model call failed (or was refused by a spend limit, or
 * stopped by the runaway guard) only the user message with its `error` marker; and after any failure, the chat metadata as it was (title aside).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Money, ServerEvent, TokenUsage } from '@cashcode/contracts';
import type { LogIds } from '../common/log-context';
import { errorType, formatEvent } from '../common/log-format';
import { HISTORY_LOG, type HistoryLog } from '../agent/history-log';
import { TITLE_SOURCE_KEY } from '../memory/chat-metadata.store';
import type { AppendOptions, ChatMessage, ChatMetadata, FinalAnswer, HistoryRecord, UserTurnInput } from '../memory/memory.types';
import type { ChatActionPlan } from './chat-actions';
import { CHAT_LOGGER, type TurnJob } from './chat-lanes';

type AnswerStats = Pick<FinalAnswer, 'usage' | 'duration_ms' | 'cost'>;

/** The usage (when the provider reported any), cost (when priced) and duration stored with a turn's answer. */
export function answerStats(usage: TokenUsage, started: number, cost?: Money): AnswerStats {
  const reported = usage.prompt_tokens > 0 || usage.completion_tokens > 0 || usage.total_tokens > 0;
  return {
    duration_ms: Math.round(performance.now() - started),
    ...(reported ? { usage: { ...usage } } : {}),
    ...(cost ? { cost: { ...cost } } : {}),
  };
}

/** A continued answer counts the stopped part's tokens, cost and time too. */
function continuedStats(plan: Extract<ChatActionPlan, { kind: 'continue' }>, final: FinalAnswer): AnswerStats {
  const stats: AnswerStats = {};
  // both parts priced in one currency: their sum; otherwise the answer shows no cost ("no price")
  if (plan.cost && final.cost && plan.cost.currency === final.cost.currency) {
    stats.cost = { amount: Math.round((plan.cost.amount + final.cost.amount) * 1e9) / 1e9, currency: final.cost.currency };
  } else if (final.cost) {
    stats.cost = undefined;
  }
  if (typeof final.duration_ms === 'number') stats.duration_ms = final.duration_ms + (plan.durationMs ?? 0);
  const parts = [plan.usage, final.usage].filter((usage): usage is TokenUsage => usage !== undefined);
  if (parts.length > 0) {
    stats.usage = {
      prompt_tokens: parts.reduce((sum, usage) => sum + usage.prompt_tokens, 0),
      completion_tokens: parts.reduce((sum, usage) => sum + usage.completion_tokens, 0),
      total_tokens: parts.reduce((sum, usage) => sum + usage.total_tokens, 0),
    };
  }
  return stats;
}

/** `done` with the cursors of what the turn persisted (additive `user_cursor` / `answer_cursor`). */
export function withCursors(events: ServerEvent[], written: readonly HistoryRecord[]): ServerEvent[] {
  if (written.length === 0) return events;
  const user = written.find((record) => record.role === 'user');
  const answer = written[written.length - 1]!;
  return events.map((event) =>
    event.event === 'done'
      ? { ...event, ...(user ? { user_cursor: user.cursor } : {}), answer_cursor: answer.cursor }
      : event,
  );
}

function withoutTitle(metadata: ChatMetadata): string {
  const { title: _title, [TITLE_SOURCE_KEY]: _source, ...rest } = metadata;
  return JSON.stringify(rest);
}

@Injectable()
export class TurnPersistence {
  private readonly logger = new Logger(CHAT_LOGGER);

  constructor(@Inject(HISTORY_LOG) private readonly memory: HistoryLog) {}

  /** The fallback title of an untitled chat without history, written before the turn runs (an empty one is not). */
  async saveFallbackTitle(chatId: string, metadata: ChatMetadata, title: string): Promise<void> {
    if (title !== '') await this.memory.saveMetadata(chatId, { ...metadata, title, [TITLE_SOURCE_KEY]: 'auto' });
  }

  /**
   * Appends a turn: a plain one, one that replaces the records from the replaced message on (regenerate, edit), or
   * a continuation whose answer starts with the stopped text and replaces it. `inline`: the only running turn writes
   * its append on the event loop; concurrent turns go through the thread pool.
   */
  persist(
    job: TurnJob,
    user: UserTurnInput,
    durable: readonly ChatMessage[],
    final: FinalAnswer,
    inline: boolean,
  ): Promise<HistoryRecord[]> {
    const { chatId, plan } = job;
    const append: AppendOptions = { inline };
    if (plan?.kind === 'continue') {
      return this.memory.appendContinuation(
        chatId,
        durable,
        { ...final, ...continuedStats(plan, final), content: plan.partial + final.content },
        { ...append, supersedes: plan.supersedes },
      );
    }
    const options = plan ? { ...append, supersedes: plan.supersedes } : append;
    return this.memory.appendTurn(chatId, user, durable, final, options);
  }

  /** A turn whose model call failed: the user message with the error's code and safe detail (a write failure is logged). */
  async persistFailed(
    chatId: string,
    user: UserTurnInput,
    error: { kind: string; message: string },
    inline: boolean,
    ids: LogIds,
    supersedes?: number,
  ): Promise<void> {
    try {
      const options = supersedes === undefined ? { inline } : { inline, supersedes };
      await this.memory.appendFailedTurn(chatId, user, error, options);
    } catch (persistErr) {
      this.logger.error(formatEvent('agent.turn.persist_failed', { failed: true, error_type: errorType(persistErr) }), ids);
    }
  }

  /** After a failed turn: the metadata as it was before, except the title (a title given meanwhile stays). */
  async restoreMetadata(chatId: string, before: ChatMetadata, ids: LogIds): Promise<void> {
    try {
      const current = (await this.memory.getChat(chatId)).metadata;
      if (withoutTitle(current) === withoutTitle(before)) return;
      const restored: ChatMetadata = { ...before };
      if (current.title) restored.title = current.title;
      else delete restored.title;
      if (current[TITLE_SOURCE_KEY] !== undefined) restored[TITLE_SOURCE_KEY] = current[TITLE_SOURCE_KEY];
      else delete restored[TITLE_SOURCE_KEY];
      await this.memory.saveMetadata(chatId, restored);
    } catch (err) {
      this.logger.error(formatEvent('agent.turn.metadata_restore_failed', { error_type: errorType(err) }), ids);
    }
  }
}
