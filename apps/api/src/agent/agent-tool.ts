/**
 * The contract every agent tool implements (built-in tools, MCP wrappers, skill tools).
 * See openspec/specs/agent-runner/spec.md "Requirement: Tool execution" (the three result projections) and
 * "Requirement: Deferred tool view" (the registry).
 */
import type { ApprovalRequestEvent, BrowserActionDetail, MemoryRequester, UntrustedSource } from '@cashcode/contracts';
import type { ElicitationAsk, ElicitationOutcome } from './elicitations';

/** Additive members of a tool's approval request. */
export type ApprovalDetails = Pick<ApprovalRequestEvent, 'automation'>;

/** A JSON Schema object describing the tool's parameters (OpenAI function `parameters`). */
export type JsonSchemaObject = {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
};

export interface ToolContext {
  chatId: string;
  /** 32-hex id of the turn, for logs */
  turnId: string;
  /** aborted when the turn is cancelled or the server shuts down; tools must stop promptly */
  signal: AbortSignal;
  /** reports the call's progress to the client (`tool_progress`); MCP progress notifications use it */
  progress?(update: ToolProgressUpdate): void;
  /**
   * asks the user for input while the call runs (an MCP elicitation, form mode); `decline` when nobody can answer
   * (openspec mcp "Requirement: Elicitation")
   */
  elicit?(ask: ElicitationAsk): Promise<ElicitationOutcome>;
  /** the untrusted content in the model's context when it made the call (untrusted-context.ts); absent: none known */
  untrustedSources?: readonly UntrustedSource[];
  /** who the turn answers: the owner (a chat), or a headless API client */
  requestedBy?: MemoryRequester;
  /** the call ran after the owner's approval (not a plain allow) */
  approved?: boolean;
  /** the tool call's id (a `delegate` call names its child's events and transcript after it) */
  callId?: string;
}

/** One progress report of a running call (an MCP `notifications/progress`). */
export interface ToolProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** An image a tool returned: sent to the model as image content when the model accepts images, never persisted. */
export interface ToolImage {
  mimeType: string;
  /** base64 */
  data: string;
}

/**
 * What a tool returns. `model` is what the LLM sees; `public` goes to the WS `tool_result` (first 200 chars);
 * `persisted` goes to history.jsonl. Both default to `model`. `ok: false` marks a failed call (also inferred
 * from the text, openspec agent-runner).
 */
export interface ToolResult {
  model: string;
  public?: string;
  persisted?: string;
  ok?: boolean;
  /** images of the result (the texts carry a placeholder for each); only the model sees them, and only this turn */
  images?: ToolImage[];
  /**
   * the untrusted content behind the result (a sub-agent's answer written after it read a page): the sources join the
   * turn's untrusted context and the model gets the result framed as untrusted (untrusted-context.ts)
   */
  untrusted?: UntrustedSource[];
}

/** The MCP server tool behind a wrapper (policy keys, risk class, approval requests). */
export interface McpToolIdentity {
  server: string;
  /** the tool's name on its server */
  tool: string;
  /** `annotations.readOnlyHint === true` */
  readOnly: boolean;
  /** `annotations.destructiveHint === true` */
  destructive: boolean;
  title?: string;
}

export interface AgentTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
  /**
   * Read-only tools (no side effects) may run concurrently with other read-only calls of the same
   * assistant message; the others run in order.
   */
  readonly readOnly: boolean;
  /**
   * A tool whose effects are gated one by one elsewhere (`delegate`: each call of its child passes the ToolGate) may
   * run concurrently with the other concurrent calls of its message; absent: only read-only tools do.
   */
  readonly concurrent?: boolean;
  /** set by MCP tool wrappers: the server tool behind this tool */
  readonly mcp?: McpToolIdentity;
  /**
   * A rarely used tool offered to the model only when it applies to the chat (read_artifact once the chat has an
   * artifact, the MCP resource tools once it uses an MCP server, skill_read_resource once it loaded a Skill): its
   * definition costs prompt bytes on every request. The answer must be stable from request to request (a change
   * rewrites the start of the request); absent: always offered.
   */
  appliesTo?(scope: { chatId: string; temporary: ReadonlySet<string> }): boolean;
  /**
   * A deferred tool (browser, schedule_task, delegate): most chats never use it, so it is offered only once activated
   * in the chat — by a direct call of its exact name, a `tool_search` match, the user's message naming one of its
   * `keywords`, or a run whose explicit subset names it (openspec agent-runner "Requirement: Deferred tool view"). An
   * activated tool is appended after the others and stays offered in the chat; the gate judges its calls as always.
   */
  readonly deferred?: DeferredToolInfo;
  /**
   * What the owner's approval card shows besides the arguments (schedule_task: the automation it would create, with a
   * readable schedule); null when the arguments are invalid — then nothing is asked and the tool refuses the call.
   */
  approvalDetails?(args: Record<string, unknown>): ApprovalDetails | null;
  /**
   * A call that needs the owner's approval whatever the tool's own risk class (a browser click that submits a form):
   * judged synchronously by the approval gate from what the tool knows when the call arrives; null when the tool's
   * class applies. A tool that escalates must check again when the call runs.
   */
  escalation?(args: Record<string, unknown>, chatId: string): ToolCallEscalation | null;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string>;
}

/** How a deferred tool is found: words (matched whole, case-insensitively) that name what it is for. */
export interface DeferredToolInfo {
  keywords: readonly string[];
}

/** What `AgentTool.escalation` returns: the risk class the call gets, and what the owner is shown. */
export interface ToolCallEscalation {
  risk: 'browser_action';
  browser: BrowserActionDetail;
}

/** Error a tool throws for a bad argument or refused operation: its message goes to the model as a tool error. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolInputError';
  }
}
