/**
 * In-process events about turns, published with EventEmitter2 (`@nestjs/event-emitter`). Later modules (Consolidator,
 * skill evolution) listen; the chat module never imports them.
 */
import type { LlmProvider, TokenUsage } from '@cashcode/contracts';
import type { ChatMessage } from '../memory/memory.types';

export const TURN_COMPLETED_EVENT = 'turn.completed';

/** Emitted after a successful turn has been persisted (not for failed or cancelled turns). */
export interface TurnCompletedEvent {
  chatId: string;
  /** 32-hex turn id (log correlation) */
  turnId: string;
  provider: LlmProvider;
  model: string;
  usage: TokenUsage;
  durationSec: number;
  /** the user's message as sent (untrimmed) */
  userContent: string;
  /** tool-call messages and tool results of the turn (persisted projections) */
  durable: ChatMessage[];
  /** the final answer */
  answer: string;
  toolCalls: number;
  failedToolCalls: number;
  iterationLimitReached: boolean;
}
