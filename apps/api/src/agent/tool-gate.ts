/**
 * ToolGate: may this tool call run now? (openspec approvals). The agent loop asks it for every call before the call
 * runs; the answer may take a while — a call whose policy is `ask` waits for the owner's decision (an
 * `approval_request` to the chat, settled by `approval_resolved`), a rule or an approved Skill lets it through, a
 * `deny` policy or a headless turn refuses it.
 *
 * Implemented by `approvals/approvals.service.ts` (bound to TOOL_GATE in AgentModule): the agent never imports the
 * approvals code, so the gate can grow without the loop knowing how it decides.
 */
import type { ApprovalRequestEvent, ApprovalResolvedEvent, SubagentRef, UntrustedSource } from '@cashcode/contracts';
import type { AgentTool } from './agent-tool';

/** Injection token of the ToolGate. */
export const TOOL_GATE = Symbol('ToolGate');

/** Where the gate's events of a call go (the turn's listener → the chat's subscribers). */
export interface ApprovalEmitter {
  request(event: ApprovalRequestEvent): void;
  resolved(event: ApprovalResolvedEvent): void;
}

/** One tool call as the gate sees it. */
export interface ApprovalCall {
  chatId: string;
  turnId: string;
  callId: string;
  tool: AgentTool;
  /** the argument JSON exactly as the model sent it */
  rawArguments: string;
  /** no one can answer (the OpenAI-compatible endpoint): an `ask` call is denied by policy at once, never asked */
  headless?: boolean;
  /**
   * the untrusted content in the model's context when it made the call (agent/untrusted-context.ts): a memory write
   * then needs the owner's approval (risk `memory_write`)
   */
  untrustedSources?: readonly UntrustedSource[];
  /** the call is a sub-agent's: the owner's card names it (`subagent` of the approval_request) */
  subagent?: SubagentRef;
  /**
   * who the turn answers (absent: the owner). `non_owner` (a group member's channel message): every call that is not
   * read-only asks the owner, whatever the owner's `allow` policies, rules and Skills say
   */
  requester?: TurnRequester;
}

/** Who a turn answers: the owner, or someone else (a channel group member) who never gets the owner's permissions. */
export type TurnRequester = 'owner' | 'non_owner';

/** What the loop does with a call: run it, or give the model `model` as the (failed) result. */
export type ApprovalVerdict = { run: true } | { run: false; model: string };

/** One call's gate: `plainAllow` when the call simply runs; otherwise the loop announces the call and opens the gate. */
export interface ApprovalGate {
  readonly plainAllow: boolean;
  /** starts the gate (emits the request or the policy decision); idempotent */
  open(emitter: ApprovalEmitter, signal: AbortSignal): Promise<ApprovalVerdict>;
}

export interface ToolGate {
  /** The gate of one call (decided synchronously; nothing is emitted until `open`). */
  gate(call: ApprovalCall): ApprovalGate;
}
