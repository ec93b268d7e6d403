/**
 * What a turn sends to the model, built before the runner starts:
 * - the explicit Skill selection of the message (`mentioned_skills` plus a legacy leading `@name`; the model gets
 *   the rest of the text),
 * - the system prompt: the chat's snapshot for its context epoch, and the history with the tool results of old turns
 *   stubbed (agent/context-window.ts: the request prefix stays the same from turn to turn between two boundaries),
 * - MCP: the chat's activated tools live again (reconnecting after a restart) and the explicitly selected
 *   connectors' tools visible for this turn only; the deferred tools the owner's message names are activated,
 * - the selected Skills loaded before the model runs: their bodies go into a system message for this turn only,
 *   right before the user message (after the history, so the request prefix stays the previous turn's); their
 *   receipts come first among the turn's durable messages,
 * - the user side of the turn as it will be persisted (with its attachments; the model's text of the message ends
 *   with a line naming their workspace paths).
 * A selection that cannot be honoured (a Skill that cannot load, a connector that cannot be prepared) is left out and
 * reported as a warning; the turn still runs. A leading `@word` that names no Skill is plain text.
 */
import type { AttachmentReceipt, MessageMetadata, UntrustedSource } from '@cashcode/contracts';
import { contextWindow } from '../agent/context-window';
import { withAttachmentsReference } from '../common/attachment-reference';
import { attachmentSources, uniqueSources } from '../common/untrusted-sources';
import type { ChatMessage } from '../common/chat-message';
import { McpError } from '../mcp/mcp.errors';
import type { UserTurnInput } from '../memory/memory.types';
import { explicitSkillSelection } from '../skills/skill-selection';
import type { ExplicitSkillsResult, TurnSkillContext } from '../skills/skill-turn.service';

/** What building a turn context needs (SystemPromptBuilder, McpService and SkillTurnService fill these in). */
export interface TurnContextSources {
  prompt: { build(context: { chatId: string; boundary?: string }): Promise<string> };
  /** `text`: the owner's message, whose named deferred tools are activated in the chat (agent/deferred-tools.ts) */
  mcp: { prepareTurn(chatId: string, servers: string[], signal: AbortSignal, text?: string): Promise<Set<string>> };
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
  /** previous user turns whose tool results stay whole (CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS); default: no pruning */
  keepToolResultsTurns?: number;
  signal: AbortSignal;
  /** the uploaded files the message refers to, checked to belong to the chat */
  attachments?: readonly AttachmentReceipt[];
  /**
   * untrusted content the message itself brings — the hook for a channel message of someone other than the owner
   * (`{kind: 'channel_message', name: <sender>}`); persisted on the user record, so later turns count it too
   */
  untrustedSources?: readonly UntrustedSource[];
}

export interface TurnContext {
  /** system prompt, history, optional selected-Skills system message, the user's task text */
  messages: ChatMessage[];
  /** tools visible for this turn only (the selected MCP connectors') */
  temporaryTools: Set<string>;
  /** assistant receipts of the selected Skills: the first durable messages of the turn */
  skillReceipts: ChatMessage[];
  /** the user side of the turn to persist */
  user: UserTurnInput;
  /** selections that could not be honoured; the turn runs without them and the client is told (`warning` events) */
  warnings: TurnWarning[];
}

/** A selected Skill or MCP connector the turn runs without. */
export interface TurnWarning {
  subject: 'skill' | 'mcp';
  name: string;
  code: string;
  detail: string;
}

export async function buildTurnContext(sources: TurnContextSources, input: TurnContextInput): Promise<TurnContext> {
  const { chatId, turnId, content, metadata, signal } = input;
  const selection = explicitSkillSelection(content, metadata.mentioned_skills);
  const window = input.keepToolResultsTurns === undefined ? null : contextWindow(input.history, input.keepToolResultsTurns);
  const system = await sources.prompt.build(window ? { chatId, boundary: window.boundary } : { chatId });
  const warnings: TurnWarning[] = [];
  // a message in someone else's words (a channel sender who is not the owner) activates nothing
  const ownText = (input.untrustedSources?.length ?? 0) === 0 ? content : undefined;
  const temporaryTools = await prepareMcp(sources, chatId, metadata, signal, warnings, ownText);
  const explicitSkills = await sources.skills.prepareExplicitSkills(selection.names, { chatId, turnId, signal });
  let taskText = selection.taskText;
  for (const skipped of explicitSkills.skipped) {
    const selected = (metadata.mentioned_skills ?? []).some((row) => row.name.trim() === skipped.name);
    if (skipped.name === selection.legacyName) taskText = content;
    // a leading `@word` that names no Skill was never a selection: it is plain text, without a warning
    if (!selected && skipped.name === selection.legacyName && skipped.code === 'skill_not_found') continue;
    warnings.push({ subject: 'skill', name: skipped.name, code: skipped.code, detail: skipped.detail });
  }
  // what the message brings from others (its attachments, a channel sender) is untrusted content of the turn
  const messageSources = uniqueSources([...attachmentSources(input.attachments), ...(input.untrustedSources ?? [])]);
  const skillReceipts: ChatMessage[] = explicitSkills.receipts.map((receipt) => ({ role: 'assistant', content: receipt }));
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    ...(window ? window.messages : input.history),
    // per-turn material goes at the end — the selected Skills' bodies (this turn only) right before the user message,
    // the attachment paths in it — so the request up to the history is the previous turn's (a cacheable prefix)
    ...(explicitSkills.systemMessage ? [{ role: 'system' as const, content: explicitSkills.systemMessage }] : []),
    userMessage(withAttachmentsReference(taskText, input.attachments), messageSources),
  ];
  const user: UserTurnInput = { content };
  if (input.untrustedSources && input.untrustedSources.length > 0) user.untrusted_sources = uniqueSources(input.untrustedSources);
  if (input.attachments && input.attachments.length > 0) user.attachments = [...input.attachments];
  if (metadata.mentioned_skills) user.mentioned_skills = metadata.mentioned_skills;
  if (metadata.selected_mcp_connectors) user.selected_mcp_connectors = metadata.selected_mcp_connectors;
  return { messages, temporaryTools, skillReceipts, user, warnings };
}

function userMessage(content: string, sources: UntrustedSource[]): ChatMessage {
  return sources.length > 0 ? { role: 'user', content, untrusted_sources: sources } : { role: 'user', content };
}

/**
 * The selected connectors' tools for this turn. A connector that cannot be prepared is left out with a warning: the
 * turn runs without it (the others are prepared one by one to tell which failed).
 */
async function prepareMcp(
  sources: TurnContextSources,
  chatId: string,
  metadata: MessageMetadata,
  signal: AbortSignal,
  warnings: TurnWarning[],
  text: string | undefined,
): Promise<Set<string>> {
  const servers = [...new Set((metadata.selected_mcp_connectors ?? []).map((connector) => connector.server))];
  try {
    return await sources.mcp.prepareTurn(chatId, servers, signal, text);
  } catch (err) {
    if (!(err instanceof McpError)) throw err;
  }
  const tools = new Set<string>();
  for (const server of servers) {
    try {
      for (const tool of await sources.mcp.prepareTurn(chatId, [server], signal)) tools.add(tool);
    } catch (err) {
      if (!(err instanceof McpError)) throw err;
      warnings.push({ subject: 'mcp', name: server, code: 'mcp_prepare_failed', detail: err.message });
    }
  }
  return tools;
}
