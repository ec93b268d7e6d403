/**
 * Chat titles (openspec chat "Requirement: Chat titles"): the fallback title from the first message, and the short
 * title the model writes after the first successful turn.
 *
 * - Fallback (set before the first turn runs, kept on any failure): the user's text without code, tool-call dumps
 *   (`CALL:[[…]]`, `[TOOL_CALLS…]`) or a leading `@skill`, whitespace collapsed, first 40 code points; empty → none.
 * - Model title: one non-streaming call to the background model of the LLM settings (else the chat's model) with a
 *   bounded prompt, few tokens and a deadline, off the turn's critical path. Its answer is cleaned (reasoning blocks,
 *   quotes, a `Title:` prefix and newlines removed, at most 60 code points). It replaces the title only while the title
 *   is still the automatic one it was asked to improve: a rename (even one made while the request runs) always wins.
 */
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { TITLE_MAX_CHARS, type LlmSelection } from '@cashcode/contracts';
import { formatEvent } from '../common/log-format';
import { logIds } from '../common/log-context';
import { LLM_CLIENT_PROVIDER, type LlmClientProvider } from '../llm-settings/llm-provider';
import { BackgroundModel, BackgroundModelError } from '../memory/background-model';
import { ChatMetadataStore } from '../memory/chat-metadata.store';

/** the longest model-written title, in code points */
export const MODEL_TITLE_MAX_CHARS = 60;
/** how much of the first message and answer the title prompt quotes, in code points */
export const TITLE_PROMPT_EXCERPT_CHARS = 1_000;
export const TITLE_MAX_TOKENS = 32;
export const TITLE_TIMEOUT_MS = 15_000;
/** The system prompt of a title request (tests recognise the request by it). */
export const TITLE_SYSTEM_PROMPT =
  'You write the title of a chat. Answer with the title only: at most six words, in the language of the user, ' +
  'without quotes, without a final full stop.';

function collapse(text: string): string {
  return text.split(/\s+/u).filter((part) => part !== '').join(' ');
}

function firstCodePoints(text: string, max: number): string {
  return Array.from(text).slice(0, max).join('');
}

/** The fallback title of a first message ('' when nothing readable is left). */
export function fallbackTitle(content: string): string {
  const text = content
    // fenced code blocks and inline code are not title material
    .replace(/```[\s\S]*?(```|$)/gu, ' ')
    .replace(/`[^`]*`/gu, ' ')
    // tool-call dumps some models (and the original client) put into text
    .replace(/CALL:\s*\[\[[\s\S]*?(\]\]|$)/gu, ' ')
    .replace(/\[TOOL_CALLS[^\]]*\]?/gu, ' ')
    // a leading Skill selection
    .replace(/^\s*@[a-z0-9][a-z0-9._-]*\s+/u, ' ');
  return firstCodePoints(collapse(text), TITLE_MAX_CHARS);
}

/** quotes, emphasis and heading marks a model wraps a title in */
const WRAPPING = new Set(['"', "'", '“', '”', '‘', '’', '«', '»', '`', '*', '#', ' ']);

function stripWrapping(text: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && WRAPPING.has(chars[start]!)) start++;
  while (end > start && WRAPPING.has(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

/** The model's answer as a title ('' when it wrote nothing usable). */
export function cleanModelTitle(answer: string): string {
  const withoutThinking = answer.replace(/<think>[\s\S]*?(<\/think>|$)/giu, ' ');
  const line = withoutThinking.split(/\r?\n/u).map((part) => part.trim()).find((part) => part !== '') ?? '';
  let title = collapse(line.replace(/^(title|标题)\s*[:：]\s*/iu, ''));
  title = stripWrapping(title).replace(/[.。]$/u, '').trim();
  if (/^CALL:|^\[TOOL_CALLS/u.test(title)) return '';
  return firstCodePoints(title, MODEL_TITLE_MAX_CHARS).trim();
}

export interface TitleRequest {
  chatId: string;
  /** the automatic title set before the turn: the model title replaces only this one */
  fallback: string;
  userContent: string;
  answer: string;
  /** the chat's model, used when no background model is set or ready */
  chatModel: LlmSelection;
}

@Injectable()
export class ChatTitleService implements OnModuleDestroy {
  private readonly logger = new Logger(ChatTitleService.name);
  private readonly shutdown = new AbortController();

  constructor(
    private readonly model: BackgroundModel,
    private readonly memory: ChatMetadataStore,
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
  ) {}

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /** Asks the model for a title and stores it; resolves with the stored title, or null (nothing changed). Never throws. */
  async improve(request: TitleRequest): Promise<string | null> {
    const ids = logIds({ chatId: request.chatId });
    const background = this.llm.backgroundSelection();
    const selection = background && this.llm.isReady(background.provider) ? background : request.chatModel;
    try {
      const answer = await this.model.complete({
        purpose: 'title',
        chatId: request.chatId,
        selection,
        system: TITLE_SYSTEM_PROMPT,
        user: [
          'First message of the chat:',
          firstCodePoints(request.userContent, TITLE_PROMPT_EXCERPT_CHARS),
          '',
          'Answer:',
          firstCodePoints(request.answer, TITLE_PROMPT_EXCERPT_CHARS),
        ].join('\n'),
        timeoutMs: TITLE_TIMEOUT_MS,
        maxTokens: TITLE_MAX_TOKENS,
        signal: this.shutdown.signal,
      });
      const title = cleanModelTitle(answer);
      if (title === '') {
        this.logger.warn(formatEvent('chat.title.unusable', { action: 'kept_fallback' }), ids);
        return null;
      }
      const stored = await this.memory.replaceAutomaticTitle(request.chatId, request.fallback, title);
      this.logger.log(formatEvent('chat.title.generated', { stored, model: selection.model }), ids);
      return stored ? title : null;
    } catch (error) {
      const kind = error instanceof BackgroundModelError ? error.kind : 'internal';
      this.logger.warn(formatEvent('chat.title.failed', { error_kind: kind, action: 'kept_fallback' }), ids);
      return null;
    }
  }
}
