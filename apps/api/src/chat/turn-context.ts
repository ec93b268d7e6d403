/**
 * What a turn sends to the model, built before the runner starts:
 * - the explicit Skill selection of the message (`mentioned_skills` plus a legacy leading `@name`; the model gets
 *   the rest of the text),
 * - the system prompt,
 * - MCP: the chat's activated tools live again (reconnecting after a restart) and the explicitly selected
 *   connectors' tools visible for this turn only,
 * - the selected Skills loaded before the model runs: their bodies go into a second system message for this turn
 *   only, their receipts come first among the turn's durable messages,
 * - the user side of the turn as it will be persisted.
 * A selection that cannot be honoured fails the turn with a TurnPreparationError (a reason the user can fix).
 */
import { HttpStatus } from '@nestjs/common';
import type { MessageMetadata } from '@cashcode/contracts';
import { DomainError } from '../common/domain-error';
import type { ChatMessage } from '../common/chat-message';
import { McpError } from '../mcp/mcp.errors';
import type { UserTurnInput } from '../memory/memory.types';
import { explicitSkillSelection } from '../skills/skill-selection';
import type { ExplicitSkillsResult, TurnSkillContext } from '../skills/skill-turn.service';

/** A turn that cannot start for a reason the user can fix (e.g. an explicitly selected Skill cannot be loaded). */
export class TurnPreparationError extends DomainError<'skill_load_failed' | 'mcp_prepare_failed'> {
  constructor(code: 'skill_load_failed' | 'mcp_prepare_failed', message: string) {
    // a selection the user made cannot be honoured as it stands: 422 wherever a REST route raises it
    super(code, message, { status: HttpStatus.UNPROCESSABLE_ENTITY });
  }
}

/** What building a turn context needs (SystemPromptBuilder, McpService and SkillTurnService fill these in). */
export interface TurnContextSources {
  prompt: { build(context: { chatId: string }): Promise<string> };
  mcp: { prepareTurn(chatId: string, servers: string[], signal: AbortSignal): Promise<Set<string>> };
  skills: { prepareExplicitSkills(names: readonly string[], ctx: TurnSkillContext): Promise<ExplicitSkillsResult> };
}

export interface TurnContextInput {
  chatId: string;
  turnId: string;
  /** the user's message as sent */
  content: string;
  metadata: MessageMetadata;
  /** the chat's history as the model sees it */
  history: readonly ChatMessage[];
  signal: AbortSignal;
}

export interface TurnContext {
  /** system prompt, optional selected-Skills system message, history, the user's task text */
  messages: ChatMessage[];
  /** tools visible for this turn only (the selected MCP connectors') */
  temporaryTools: Set<string>;
  /** assistant receipts of the selected Skills: the first durable messages of the turn */
  skillReceipts: ChatMessage[];
  /** the user side of the turn to persist */
  user: UserTurnInput;
}

export async function buildTurnContext(sources: TurnContextSources, input: TurnContextInput): Promise<TurnContext> {
  const { chatId, turnId, content, metadata, signal } = input;
  const selection = explicitSkillSelection(content, metadata.mentioned_skills);
  const system = await sources.prompt.build({ chatId });
  const temporaryTools = await prepareMcp(sources, chatId, metadata, signal);
  const explicitSkills = await sources.skills.prepareExplicitSkills(selection.names, { chatId, turnId, signal });
  if (!explicitSkills.ok) throw new TurnPreparationError('skill_load_failed', explicitSkills.detail);
  const skillReceipts: ChatMessage[] = explicitSkills.receipts.map((receipt) => ({ role: 'assistant', content: receipt }));
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    ...(explicitSkills.systemMessage ? [{ role: 'system' as const, content: explicitSkills.systemMessage }] : []),
    ...input.history,
    { role: 'user', content: selection.taskText },
  ];
  const user: UserTurnInput = { content };
  if (metadata.mentioned_skills) user.mentioned_skills = metadata.mentioned_skills;
  if (metadata.selected_mcp_connectors) user.selected_mcp_connectors = metadata.selected_mcp_connectors;
  return { messages, temporaryTools, skillReceipts, user };
}

/** A selected connector that cannot be prepared fails the turn with a clear error. */
async function prepareMcp(
  sources: TurnContextSources,
  chatId: string,
  metadata: MessageMetadata,
  signal: AbortSignal,
): Promise<Set<string>> {
  const servers = (metadata.selected_mcp_connectors ?? []).map((connector) => connector.server);
  try {
    return await sources.mcp.prepareTurn(chatId, servers, signal);
  } catch (err) {
    if (err instanceof McpError) throw new TurnPreparationError('mcp_prepare_failed', err.message);
    throw err;
  }
}
