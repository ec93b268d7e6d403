/**
 * The chat's entry point for its transports (ChatGateway, the OpenAI-compatible `/v1`): submit a message or a chat
 * action, cancel, ask whether a chat's turn runs, and `events$`, every event of every chat in order (the gateway fans
 * them out to the chat's subscribers; no transport types here). The turns themselves run on the per-chat lanes
 * (chat-lanes.ts) through the turn pipeline (turn-pipeline.ts), which writes history through turn-persistence.ts.
 * - Chat actions (regenerate, edit, continue; chat-actions.ts): checked against the current branch, refused while a
 *   turn of the chat runs or waits, then run as turns whose records replace the old ones (`supersedes`).
 * - Session deleted: the running turn is aborted (nothing persisted) and queued turns of that chat are dropped.
 * - Spend-limit warnings of a chat's model calls go to the chat's connections (`usage_warning`).
 */
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Subject, type Subscription } from 'rxjs';
import type { ChannelMessageSource, MessageMetadata, ServerEvent, UntrustedSource } from '@cashcode/contracts';
import { SESSION_DELETED_EVENT, type SessionDeletedEvent } from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { HISTORY_LOG, type HistoryLog } from '../agent/history-log';
import type { ToolAllowlist } from '../agent/tool-registry';
import type { TurnRequester } from '../agent/tool-gate';
import { UsageService } from '../usage/usage.service';
import { CONTINUE_INSTRUCTION, planChatAction, type ChatActionRequest } from './chat-actions';
import { ChatLanes, type SubmitResult } from './chat-lanes';
import { DeltaCoalescer } from './delta-coalescer';
import type { TurnEventLog } from './turn-event-log';
import { TurnPipeline } from './turn-pipeline';

export type { SubmitResult } from './chat-lanes';

export interface ChatOutboundEvent {
  chatId: string;
  event: ServerEvent;
}

/**
 * How a turn is run: `headless` when no one can answer approvals (the OpenAI-compatible endpoint, an automation that
 * denies at once); `toolAllowlist`: the only tools the turn may use (an automation's subset).
 */
export interface SubmitOptions {
  headless?: boolean;
  /** a channel message: who sent it, recorded with the user message (openspec channels) */
  source?: ChannelMessageSource;
  /**
   * the message is (or carries) content from someone other than the owner — a channel message of a non-owner sender
   * (`{kind: 'channel_message', name: <sender>}`): the turn's memory, Skill and automation writes then ask the owner
   */
  untrustedSources?: readonly UntrustedSource[];
  toolAllowlist?: ToolAllowlist;
  /**
   * who the turn answers (absent: the owner). `non_owner` — a group member's channel message — never gets the owner's
   * standing permissions: every call that is not read-only asks the owner (openspec approvals)
   */
  requester?: TurnRequester;
}

@Injectable()
export class ChatService implements OnModuleDestroy {
  private readonly outbound = new Subject<ChatOutboundEvent>();
  private readonly lanes: ChatLanes = new ChatLanes((job, running) =>
    this.pipeline.run(job, running, {
      emit: (event) => this.emit(job.chatId, event),
      alone: () => this.lanes.runningTurns === 1,
    }),
  );

  /** Every event of every chat, in order; the gateway fans them out. */
  readonly events$ = this.outbound.asObservable();
  /** every event of a chat passes here: the deltas of one tick leave as one event */
  private readonly deltas = new DeltaCoalescer((chatId, event) => {
    // recorded as it goes out (deltas already merged): a connection attaching later replays exactly what was sent,
    // one attached now gets it live
    this.lanes.runningLog(chatId)?.record(event);
    this.outbound.next({ chatId, event });
  });
  private readonly usageWarnings: Subscription;

  constructor(
    private readonly pipeline: TurnPipeline,
    @Inject(HISTORY_LOG) private readonly memory: HistoryLog,
    /** spend-limit warnings of a chat's model calls go to the chat's connections (usage_warning) */
    usage: UsageService,
  ) {
    this.usageWarnings = usage.warnings$.subscribe((warning) => this.emit(warning.chat_id, warning));
  }

  /** Queues a validated message on its chat's lane. */
  submit(
    chatId: string,
    content: string,
    metadata: MessageMetadata,
    attachments: readonly string[] = [],
    options: SubmitOptions = {},
  ): SubmitResult {
    return this.lanes.enqueue({
      chatId,
      content,
      metadata,
      attachments,
      ...(options.headless === true ? { headless: true } : {}),
      ...(options.source ? { source: options.source } : {}),
      ...(options.untrustedSources && options.untrustedSources.length > 0 ? { untrustedSources: options.untrustedSources } : {}),
      ...(options.toolAllowlist ? { toolAllowlist: options.toolAllowlist } : {}),
      ...(options.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
    });
  }

  /**
   * Queues a chat action (chat-actions.ts) once it is checked against the chat's current branch. Refused while a turn
   * of the chat runs or waits (the action is about the last turn, which must be settled first).
   */
  async submitAction(chatId: string, request: ChatActionRequest): Promise<SubmitResult> {
    const busy = (): SubmitResult | null =>
      this.lanes.busy(chatId)
        ? { accepted: false, detail: 'A turn of this chat is still running; wait for it or stop it first.', code: 'turn_running' }
        : null;
    if (this.lanes.closed) return { accepted: false, detail: 'The server is shutting down.', code: 'shutting_down' };
    const before = busy();
    if (before) return before;
    const records = await this.memory.readRecords(chatId);
    const check = planChatAction(records, request);
    if (!check.ok) return { accepted: false, detail: check.detail, code: check.code };
    // a message may have been queued while the history was read
    const after = busy();
    if (after) return after;
    const { plan } = check;
    const content = plan.kind === 'resend' ? plan.content : CONTINUE_INSTRUCTION;
    return this.lanes.enqueue({ chatId, content, metadata: plan.metadata, plan });
  }

  /** Cancels the running turn of a chat (queued turns stay queued). Returns whether a turn was running. */
  cancel(chatId: string): boolean {
    return this.lanes.abort(chatId, 'client');
  }

  /** Whether a turn of this chat is running. */
  isRunning(chatId: string): boolean {
    return this.lanes.isRunning(chatId);
  }

  /** The log of the running turn of a chat (null when none runs): what a connection that starts following it replays. */
  runningTurnLog(chatId: string): TurnEventLog | null {
    return this.lanes.runningLog(chatId);
  }

  /** A deleted session: abort its running turn without persisting anything, and drop its queued turns. */
  @OnAppEvent(SESSION_DELETED_EVENT)
  onSessionDeleted(payload: SessionDeletedEvent): void {
    this.lanes.drop(payload.chatId);
  }

  async onModuleDestroy(): Promise<void> {
    this.usageWarnings.unsubscribe();
    await this.lanes.close();
    this.outbound.complete();
  }

  private emit(chatId: string, event: ServerEvent): void {
    this.deltas.push(chatId, event);
  }
}
