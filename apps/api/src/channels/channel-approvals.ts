/**
 * Approvals answered with channel buttons (openspec channels "Requirement: Approvals by button"): an `approval_request`
 * of a channel chat becomes a message with the full command (exact text) and its risk, and buttons Allow once /
 * Always / Deny. A button carries only a random token (and the decision letter); the token maps, server-side, to the
 * chat, the call and the conversation the question was sent to. A press is refused (with a notice to the presser)
 * when the token is unknown or settled, when it comes from another conversation, or when the presser is not the owner;
 * otherwise it goes through ApprovalsService.decide, the same protocol (expiry, audit) as the console's answer.
 */
import { randomBytes } from 'node:crypto';
import { execArgvLabel, type ApprovalDecision, type ApprovalRequestEvent, type ApprovalResolvedEvent, type StandingRuleScope } from '@cashcode/contracts';
import type { DecideResult } from '../approvals/approvals.service';
import type { ChannelAdapter, ChannelButton, InboundAction } from './channel-adapter';

const DECISIONS: Record<string, ApprovalDecision> = { o: 'allow_once', a: 'allow_always', d: 'deny' };
const DECISION_LABELS: Record<ApprovalDecision, string> = {
  allow_once: 'Allowed once',
  allow_always: 'Always allowed',
  deny: 'Denied',
};
const ACTION_PATTERN = /^ap:([A-Za-z0-9_-]{22}):([oad])$/;

interface PendingQuestion {
  chatId: string;
  callId: string;
  conversationId: string;
  adapter: ChannelAdapter;
  messageId: string;
  text: string;
}

/** The longest command shown whole; a longer one (rare) is cut with a note, the console shows it all. */
const MAX_SHOWN_COMMAND_CHARS = 3_000;

function fence(text: string): string {
  let ticks = '```';
  while (text.includes(ticks)) ticks += '`';
  return `${ticks}\n${text}\n${ticks}`;
}

/** What the Always button would allow from now on, in words (the console's card shows the same). */
function scopeText(scope: StandingRuleScope): string {
  switch (scope.kind) {
    case 'exec_program':
      return `every command of the program ${scope.program}`;
    case 'exec_command':
      return `exactly the command ${execArgvLabel(scope.argv)}`;
    case 'tool':
      return `every call of the tool ${scope.tool}`;
    case 'mcp_tool':
      return `every call of the tool ${scope.tool} of the MCP server ${scope.server}`;
  }
}

/** At most `max` characters of a text, and how many more there are. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters: see the console)`;
}

/**
 * The question's Markdown: tool, risk, the exact command (or arguments), and when it expires. `maxShown` caps the
 * command and the memory entry (`ask` lowers it until the rendering fits one message).
 */
export function approvalQuestion(event: ApprovalRequestEvent, maxShown = MAX_SHOWN_COMMAND_CHARS): string {
  const shown = cut(event.command ?? event.arguments, maxShown);
  const lines = [
    `**Approval needed:** \`${event.tool}\` · risk **${event.risk}**${event.server ? ` · MCP server \`${event.server}\`` : ''}`,
    fence(shown),
  ];
  if (event.memory_entry) lines.push('Would remember:', fence(cut(event.memory_entry, maxShown)));
  if (event.untrusted_sources && event.untrusted_sources.length > 0) {
    // one code span each: no backtick or line break of a name (a query, a sender's name) can end it and add text
    const names = event.untrusted_sources.map((source) => `\`${source.name.replace(/`/g, "'").replace(/\s+/g, ' ').trim()}\``);
    lines.push(`Untrusted content in the context: ${names.join(', ')}`);
  }
  // a fence, not a code span: a backtick or a blank line of the model's `cwd` cannot end it and add a link
  if (event.cwd) lines.push('Working directory:', fence(event.cwd));
  if (event.sandboxed === false) lines.push('Runs **outside** the sandbox.');
  // the owner sees what Always would cover before pressing it (a program's rule covers all its commands)
  if (event.always_scope) lines.push('Always would allow from now on, without asking:', fence(scopeText(event.always_scope)));
  lines.push(`Expires ${event.expires_at}.`);
  return lines.join('\n\n');
}

export class ChannelApprovals {
  private readonly byToken = new Map<string, PendingQuestion>();

  constructor(
    private readonly decide: (chatId: string, callId: string, decision: ApprovalDecision) => Promise<DecideResult>,
    private readonly isOwner: (adapter: ChannelAdapter, senderId: string) => Promise<boolean>,
  ) {}

  /** Sends the question with its buttons (`heading`: where it comes from, when not from the conversation's own chat). */
  async ask(adapter: ChannelAdapter, conversationId: string, event: ApprovalRequestEvent, heading?: string): Promise<void> {
    const token = randomBytes(16).toString('base64url');
    // the question is one message: a rendering that would be split (escaping can make it several times longer) is cut
    // with a note instead, so the owner never sees a first part without the rest of the command or the sandbox line
    const question = (maxShown: number) => (heading ? `${heading}\n\n${approvalQuestion(event, maxShown)}` : approvalQuestion(event, maxShown));
    let maxShown = MAX_SHOWN_COMMAND_CHARS;
    let text = question(maxShown);
    while (adapter.render(text).length > 1 && maxShown > 0) {
      maxShown = Math.floor(maxShown / 2);
      text = question(maxShown);
    }
    const buttons: ChannelButton[] = [
      { label: 'Allow once', data: `ap:${token}:o` },
      ...(event.always_scope ? [{ label: 'Always', data: `ap:${token}:a` }] : []),
      { label: 'Deny', data: `ap:${token}:d` },
    ];
    const rendered = adapter.render(text)[0] ?? '';
    const messageId = await adapter.ask(conversationId, rendered, buttons);
    this.byToken.set(token, { chatId: event.chat_id, callId: event.call_id, conversationId, adapter, messageId, text });
  }

  /** The request was settled (by a button, the console, a policy, the expiry or a stop): the buttons go away. */
  async resolved(event: ApprovalResolvedEvent): Promise<void> {
    for (const [token, question] of this.byToken) {
      if (question.chatId !== event.chat_id || question.callId !== event.call_id) continue;
      this.byToken.delete(token);
      const by = event.by === 'user' ? '' : event.by === 'timeout' ? ' (no answer in time)' : event.by === 'cancel' ? ' (turn stopped)' : ' (by a rule)';
      const rendered = question.adapter.render(`${question.text}\n\n**${DECISION_LABELS[event.decision]}**${by}`)[0] ?? '';
      await question.adapter.closeQuestion(question.conversationId, question.messageId, rendered).catch(() => undefined);
    }
  }

  /** Whether the action is an approval button's (even a forged one): then it was answered here. */
  async onAction(adapter: ChannelAdapter, action: InboundAction): Promise<boolean> {
    if (!action.data.startsWith('ap:')) return false;
    const match = ACTION_PATTERN.exec(action.data);
    const question = match ? this.byToken.get(match[1] as string) : undefined;
    if (!match || !question || question.adapter.kind !== adapter.kind) {
      await action.answer('This button is not valid (any more).');
      return true;
    }
    if (question.conversationId !== action.conversation.id || question.messageId !== action.messageId) {
      await action.answer('This button does not belong to this chat.');
      return true;
    }
    if (!(await this.isOwner(adapter, action.sender.id))) {
      await action.answer('Only the owner can answer approvals.');
      return true;
    }
    const decision = DECISIONS[match[2] as string] as ApprovalDecision;
    const result = await this.decide(question.chatId, question.callId, decision);
    await action.answer(result.ok ? DECISION_LABELS[decision] : result.detail);
    return true;
  }

  /** Forgets the questions of a chat (its conversation was revoked). */
  forgetChat(chatId: string): void {
    for (const [token, question] of this.byToken) if (question.chatId === chatId) this.byToken.delete(token);
  }
}
