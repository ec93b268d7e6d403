/**
 * The main tool registry and its deferred view (openspec agent-runner).
 *
 * - Main registry: name → tool; registering an existing name replaces it (built-in tools, MCP wrappers).
 * - Meta tools: the deferred view's own always-visible tools (tool_search, mcp_prepare, skill tools — registered by
 *   later modules through `registerMeta`).
 * - Visibility per call: meta tools + every main tool not starting with `mcp_` and not deferred + `mcp_*` and deferred
 *   tools activated for the chat (through the pluggable ToolActivationSource) or temporary for the turn (a deferred
 *   tool also when the turn's explicit subset names it), except tools that do not apply to the chat yet
 *   (`AgentTool.appliesTo`). The always-offered tools first, by name, then the activated ones in activation order.
 * - A direct call of a deferred tool by its exact name activates it in the chat (the model knows the name from
 *   tool_search's description); the gate judges the call like any other.
 * - Execution never throws for a tool problem: unknown tools, invalid arguments and throwing tools come back as a
 *   tool error text with the retry hint. Only cancellation (the turn's AbortSignal) propagates.
 */
import { Injectable } from '@nestjs/common';
import type { UntrustedSource } from '@cashcode/contracts';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { MAX_JSON_DEPTH, parseJsonLimited } from '../common/json-limits';
import { TOOL_ERROR_HINT } from '../common/model-hints';
import type { AgentTool, ToolContext, ToolImage, ToolResult } from './agent-tool';

/** Suffix appended to every registry/tool error the model sees (openspec agent-runner); never shown to a client. */
export { TOOL_ERROR_HINT };

export const MCP_TOOL_PREFIX = 'mcp_';

/** Where the chat's persistent activation set of `mcp_*` tools lives (the MCP module plugs in here, openspec mcp). */
export interface ToolActivationSource {
  isActivated(chatId: string, toolName: string): boolean;
  /** called on every execution of an activated tool (refreshes its LRU timestamp) */
  touch(chatId: string, toolName: string): void;
  /** the chat's activated tools in the order they were first activated (when the source keeps one) */
  activeTools?(chatId: string): readonly string[];
  /** adds tools to the chat's set (a deferred tool called by name); a tool already there keeps its place */
  activate?(chatId: string, tools: readonly string[]): Promise<void>;
}

const NO_ACTIVATION: ToolActivationSource = {
  isActivated: () => false,
  touch: () => undefined,
};

/** The per-turn view of the registry: which chat, and the `mcp_*` tools visible for this turn only. */
export interface ToolScope {
  chatId: string;
  /** tools of explicitly selected connectors, visible for this turn only, never persisted */
  temporary: ReadonlySet<string>;
  /**
   * a sub-agent's run (openspec subagents): the only tools it is offered and may run, a subset of its parent turn's;
   * absent: every visible tool
   */
  only?: ReadonlySet<string>;
  /** the only tools this turn may see and run (an automation's subset); absent: every tool */
  allow?: ToolAllowlist;
}

/**
 * Which tools a turn may use. Asked without `args` for the tool list the model sees, and with the call's arguments
 * before a call runs (a Skill or MCP server named in the arguments can be refused there).
 */
export interface ToolAllowlist {
  allows(tool: AgentTool, args?: Record<string, unknown>): boolean;
  /** whether the list names this tool explicitly: a deferred tool it names is offered from the start */
  offers?(name: string): boolean;
}

/** The outcome of one tool call, in the three projections of openspec agent-runner "Requirement: Tool execution". */
export interface ToolExecution {
  name: string;
  /** what the model sees */
  model: string;
  /** what the client sees (WS tool_result, first 200 chars) */
  public: string;
  /** what history.jsonl keeps */
  persisted: string;
  /** false when the call failed (openspec agent-runner or ToolResult.ok === false) */
  ok: boolean;
  durationMs: number;
  /** images for the model (ToolResult.images) */
  images?: ToolImage[];
  /** the untrusted sources behind the result (ToolResult.untrusted) */
  untrusted?: UntrustedSource[];
}

/** Raised by `execute` only when the turn was cancelled while the tool ran. */
export class ToolExecutionCancelledError extends Error {
  constructor() {
    super('The tool call was cancelled.');
    this.name = 'ToolExecutionCancelledError';
  }
}

/**
 * Failure detection (openspec agent-runner "Requirement: Tool execution") on a model projection: left-trimmed text
 * starting with `Error`, or a JSON object with a truthy `error` or with `success === false`.
 */
export function isToolFailureText(text: string): boolean {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('Error')) return true;
  if (!trimmed.startsWith('{')) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
    const record = parsed as Record<string, unknown>;
    return Boolean(record['error']) || record['success'] === false;
  } catch {
    return false;
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  return 'unknown error';
}

type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; reason: string };

/** Tool-call arguments as the model sent them: a JSON object (an empty string means no arguments). */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === '') return { ok: true, args: {} };
  const result = parseJsonLimited(raw);
  if (!result.ok) {
    return {
      ok: false,
      reason:
        result.reason === 'too_deep'
          ? `the arguments are nested too deeply (more than ${MAX_JSON_DEPTH} levels)`
          : `the arguments are not valid JSON (${result.message})`,
    };
  }
  const parsed = result.value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, reason: 'the arguments must be a JSON object' };
  }
  return { ok: true, args: parsed as Record<string, unknown> };
}

function compareToolNames(a: string, b: string): number {
  const aMcp = a.startsWith(MCP_TOOL_PREFIX);
  const bMcp = b.startsWith(MCP_TOOL_PREFIX);
  if (aMcp !== bMcp) return aMcp ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Resolves with the tool's promise, or rejects as soon as the signal aborts (a tool that ignores it can't hold the turn). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new ToolExecutionCancelledError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ToolExecutionCancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** Whether the scope's allowlist lets this call run (arguments that do not parse are the registry's to refuse). */
function allowedCall(tool: AgentTool, scope: ToolScope, rawArguments: string | undefined): boolean {
  if (!scope.allow) return true;
  const parsed = rawArguments === undefined ? null : parseToolArguments(rawArguments);
  return scope.allow.allows(tool, parsed?.ok ? parsed.args : undefined);
}

/** A tool as the model sees it: the chat-completions function schema. */
export function toolSchema(tool: AgentTool): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

@Injectable()
export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();
  private readonly metaTools = new Map<string, AgentTool>();
  private activation: ToolActivationSource = NO_ACTIVATION;

  /** Adds a tool to the main registry; an existing tool with the same name is replaced. */
  register(tool: AgentTool): void {
    this.tools.set(tool.name, tool);
  }

  /** Removes a tool from the main registry; returns whether it was there. */
  unregister(name: string): boolean {
    return this.tools.delete(name);
  }

  /** Adds an always-visible meta tool of the deferred view (tool_search, mcp_prepare, skill tools). */
  registerMeta(tool: AgentTool): void {
    this.metaTools.set(tool.name, tool);
  }

  unregisterMeta(name: string): boolean {
    return this.metaTools.delete(name);
  }

  /** Plugs in the chat activation set (MCP module). */
  setActivationSource(source: ToolActivationSource | null): void {
    this.activation = source ?? NO_ACTIVATION;
  }

  get(name: string): AgentTool | undefined {
    return this.metaTools.get(name) ?? this.tools.get(name);
  }

  has(name: string): boolean {
    return this.metaTools.has(name) || this.tools.has(name);
  }

  /** Names in the main registry (not meta tools), in visibility order. */
  names(): string[] {
    return [...this.tools.keys()].sort(compareToolNames);
  }

  /** Every registered tool (meta tools first where a name is in both), in visibility order. */
  allTools(): AgentTool[] {
    const all = new Map<string, AgentTool>();
    for (const tool of this.metaTools.values()) all.set(tool.name, tool);
    for (const tool of this.tools.values()) if (!all.has(tool.name)) all.set(tool.name, tool);
    return [...all.values()].sort((a, b) => compareToolNames(a.name, b.name));
  }

  /**
   * The tool a call would run in this scope: null for an unknown tool or an `mcp_*` tool that is not activated (the
   * registry answers those without running anything).
   */
  runnable(name: string, scope: ToolScope, rawArguments?: string): AgentTool | null {
    if (scope.only && !scope.only.has(name)) return null;
    const meta = this.metaTools.get(name);
    const tool = meta ?? this.tools.get(name);
    if (!tool || !allowedCall(tool, scope, rawArguments)) return null;
    if (meta) return meta;
    if (name.startsWith(MCP_TOOL_PREFIX) && !this.isUsable(name, scope)) return null;
    return tool;
  }

  /** The deferred tools (AgentTool.deferred), by name. */
  deferredTools(): AgentTool[] {
    return [...this.tools.values()].filter((tool) => tool.deferred !== undefined).sort((a, b) => compareToolNames(a.name, b.name));
  }

  /** Whether a call of this tool may run concurrently with other read-only calls. Unknown names are not. */
  isReadOnly(name: string): boolean {
    return this.get(name)?.readOnly === true;
  }

  /** Whether a call may run concurrently with the read-only calls of its message (read-only or `concurrent`). */
  runsConcurrently(name: string): boolean {
    const tool = this.get(name);
    return tool?.readOnly === true || tool?.concurrent === true;
  }

  /**
   * The tools the model sees for one call of this turn (openspec agent-runner), in visibility order: the built-in and
   * meta tools (mcp_prepare too) by name, then the chat's activated MCP and deferred tools in activation order, then this
   * turn's temporary ones (and the deferred ones its subset names) by name. Activating a tool appends it, so the tool
   * list — part of every request's prefix — keeps its earlier part.
   */
  visibleTools(scope: ToolScope): AgentTool[] {
    const visible = new Map<string, AgentTool>();
    const applies = (tool: AgentTool) =>
      (!scope.only || scope.only.has(tool.name)) && (tool.appliesTo?.(scope) ?? true) && (scope.allow?.allows(tool) ?? true);
    for (const tool of this.metaTools.values()) if (applies(tool)) visible.set(tool.name, tool);
    for (const tool of this.tools.values()) {
      if (visible.has(tool.name) || this.metaTools.has(tool.name) || !applies(tool)) continue;
      const named = tool.deferred !== undefined && (scope.only?.has(tool.name) === true || scope.allow?.offers?.(tool.name) === true);
      if (!this.onRequest(tool) || named || this.isUsable(tool.name, scope)) visible.set(tool.name, tool);
    }
    const order = this.activation.activeTools?.(scope.chatId) ?? [];
    const rank = new Map(order.map((name, index) => [name, index]));
    const activatedRank = (tool: AgentTool) =>
      this.onRequest(tool) && !this.metaTools.has(tool.name) ? (rank.get(tool.name) ?? order.length) : -1;
    return [...visible.values()].sort((a, b) => activatedRank(a) - activatedRank(b) || compareToolNames(a.name, b.name));
  }

  /**
   * Executes one tool call. Never throws for a tool problem (the error text goes to the model with the hint);
   * throws ToolExecutionCancelledError when the turn is cancelled meanwhile.
   */
  async execute(name: string, rawArguments: string, ctx: ToolContext, scope: ToolScope): Promise<ToolExecution> {
    const started = performance.now();
    const finish = (result: ToolResult | string): ToolExecution => {
      const normalized: ToolResult = typeof result === 'string' ? { model: result } : result;
      const model = typeof normalized.model === 'string' ? normalized.model : String(normalized.model);
      return {
        name,
        model,
        public: normalized.public ?? model,
        persisted: normalized.persisted ?? model,
        ok: normalized.ok ?? !isToolFailureText(model),
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(normalized.images && normalized.images.length > 0 ? { images: normalized.images } : {}),
        ...(normalized.untrusted && normalized.untrusted.length > 0 ? { untrusted: normalized.untrusted } : {}),
      };
    };
    // the hint is for the model (and the persisted history the model sees again); the client gets the error alone
    const failure = (text: string): ToolExecution => finish({ model: text + TOOL_ERROR_HINT, public: text, ok: false });

    if (ctx.signal.aborted) throw new ToolExecutionCancelledError();
    if (scope.only && !scope.only.has(name)) {
      return failure(`Error: Tool '${name}' is not available to this sub-agent. Available: ${[...scope.only].join(', ')}`);
    }
    const meta = this.metaTools.get(name);
    const tool = meta ?? this.tools.get(name);
    if (!tool) {
      return failure(`Error: Tool '${name}' not found. Available: ${this.names().join(', ')}`);
    }
    if (!meta && name.startsWith(MCP_TOOL_PREFIX)) {
      if (!this.isUsable(name, scope)) {
        // not counted as a failure (openspec agent-runner): the model is told how to proceed
        const notice = `Tool '${name}' is not activated yet and cannot be executed. Activate it first with tool_search or mcp_prepare.`;
        return finish({ model: `${notice}${TOOL_ERROR_HINT}`, public: notice, ok: true });
      }
      if (!scope.temporary.has(name)) this.activation.touch(scope.chatId, name);
    }
    const parsed = parseToolArguments(rawArguments);
    if (!parsed.ok) {
      return failure(`Error: Invalid arguments for ${name}: ${parsed.reason}. Call the tool again with a JSON object.`);
    }
    if (scope.allow && !scope.allow.allows(tool, parsed.args)) {
      return failure(`Error: The tool '${name}' is not available in this run (with these arguments); use only the tools you were given.`);
    }
    if (!meta && tool.deferred) await this.activateDeferred(name, scope);
    try {
      const result = await raceAbort(Promise.resolve().then(() => tool.execute(parsed.args, ctx)), ctx.signal);
      return finish(result);
    } catch (err) {
      if (err instanceof ToolExecutionCancelledError || ctx.signal.aborted) throw new ToolExecutionCancelledError();
      return failure(`Error executing ${name}: ${errorMessage(err)}`);
    }
  }

  /** A tool offered only once activated: `mcp_*` wrappers and deferred tools. */
  private onRequest(tool: AgentTool): boolean {
    return tool.name.startsWith(MCP_TOOL_PREFIX) || tool.deferred !== undefined;
  }

  /**
   * A deferred tool called by its name: activated in the chat (appended to its offered tools from the next request on),
   * or its use refreshed. A sub-agent's run is given its tools by name and activates nothing in its parent's chat.
   */
  private async activateDeferred(name: string, scope: ToolScope): Promise<void> {
    if (scope.only) return;
    if (this.activation.isActivated(scope.chatId, name)) {
      this.activation.touch(scope.chatId, name);
      return;
    }
    try {
      await this.activation.activate?.(scope.chatId, [name]);
    } catch {
      // the tool is active in memory; persisting is retried with the chat's next change
    }
  }

  private isUsable(name: string, scope: ToolScope): boolean {
    return scope.temporary.has(name) || this.activation.isActivated(scope.chatId, name);
  }
}
