/**
 * `delegate` (openspec subagents): hands one task to a sub-agent with a fresh context and a subset of this turn's
 * tools, and returns its answer. The checks here keep a child from ever doing more than its parent may: every tool
 * asked for must be one this turn's model is offered right now (or a deferred tool it could call by name right now),
 * `delegate` itself only while the depth limit allows, `max_iterations` is capped by CASHCODE_SUBAGENT_MAX_ITERATIONS
 * and the token budget `max_tokens` by CASHCODE_SUBAGENT_MAX_TOKENS (child-budget.ts checks it before each of the
 * child's model calls).
 */
import { isValidSkillName } from '@cashcode/skill-format';
import type { AppConfig } from '../../config/app-config';
import { ToolInputError, type AgentTool, type JsonSchemaObject, type ToolContext, type ToolResult } from '../agent-tool';
import type { ActiveRun, AgentRunner } from '../agent-runner';
import type { ToolRegistry } from '../tool-registry';
import { optionalInteger, requireString, toolError } from '../tools/tool-args';
import type { DelegateRequest, SubagentRuns } from './subagent-runs';

export const DELEGATE_TOOL = 'delegate';
/** characters of a task */
export const MAX_TASK_CHARS = 20_000;
/** entries of `tools` or `skills` */
export const MAX_LIST_ENTRIES = 64;

function stringList(args: Record<string, unknown>, name: string): string[] | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    throw new ToolInputError(`argument '${name}' must be an array of strings`);
  }
  if (value.length > MAX_LIST_ENTRIES) throw new ToolInputError(`argument '${name}' may list at most ${MAX_LIST_ENTRIES} entries`);
  return [...new Set((value as string[]).map((entry) => entry.trim()).filter((entry) => entry !== ''))];
}

export class DelegateTool implements AgentTool {
  readonly name = DELEGATE_TOOL;
  // most chats never delegate: offered once activated in the chat (agent-tool.ts `deferred`)
  readonly deferred = { keywords: ['sub-agent', 'subagent', 'sub-agents', 'subagents', 'in parallel'] };
  // every request carries this definition: kept short (the prompt prefix pays for each byte)
  readonly description =
    'Hand a self-contained task to a sub-agent with a fresh context (it does not see this conversation) and get its ' +
    'answer. Calls in one message run in parallel.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      task: { type: 'string', description: 'The whole task, with all the context it needs.' },
      tools: { type: 'array', items: { type: 'string' }, description: 'Your tools it may use (default: all).' },
      skills: { type: 'array', items: { type: 'string' }, description: 'Skills it should load.' },
      max_iterations: { type: 'integer', minimum: 1 },
      max_tokens: { type: 'integer', minimum: 1, description: 'Token budget of all its model calls.' },
    },
    required: ['task'],
    additionalProperties: false,
  };
  readonly readOnly = false;
  // each call of the child passes the ToolGate itself: several delegations of one message run side by side
  readonly concurrent = true;

  constructor(
    private readonly config: Pick<AppConfig, 'subagents'>,
    private readonly runner: Pick<AgentRunner, 'activeRun'>,
    private readonly runs: Pick<SubagentRuns, 'run'>,
    private readonly registry?: Pick<ToolRegistry, 'get' | 'runnable'>,
  ) {}

  /** A deferred tool the parent turn could call by its name now (its scope: sub-agent subset, automation allowlist). */
  private callableDeferred(parent: ActiveRun, name: string): boolean {
    if (name === DELEGATE_TOOL || this.registry?.get(name)?.deferred === undefined) return false;
    const { request } = parent;
    const scope = {
      chatId: request.chatId,
      temporary: request.temporaryTools ?? new Set<string>(),
      ...(request.toolAllowlist ? { allow: request.toolAllowlist } : {}),
      ...(request.child ? { only: request.child.tools } : {}),
    };
    return this.registry.runnable(name, scope) !== null;
  }

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const parent = this.runner.activeRun(ctx.signal);
    if (!parent || ctx.callId === undefined) return toolError('delegate can only be called by the agent during a turn.');
    const limits = this.config.subagents;
    if (parent.depth >= limits.maxDepth) {
      return toolError(`a sub-agent cannot delegate further (the depth limit is ${limits.maxDepth}).`);
    }
    const task = requireString(args, 'task').trim();
    if (task === '') throw new ToolInputError("argument 'task' must not be empty");
    if (task.length > MAX_TASK_CHARS) throw new ToolInputError(`argument 'task' is longer than ${MAX_TASK_CHARS} characters`);
    const maxIterations = Math.min(optionalInteger(args, 'max_iterations', limits.maxIterations, 1, 1000), limits.maxIterations);
    const maxTokens = Math.min(optionalInteger(args, 'max_tokens', limits.maxTokens, 1, 1_000_000_000), limits.maxTokens);
    const skills = stringList(args, 'skills') ?? [];
    // the names go into the child's system prompt: only Skill names, never text of the model's choosing
    if (skills.some((name) => !isValidSkillName(name))) {
      throw new ToolInputError("argument 'skills' holds a name that is not a Skill name (lowercase letters, digits, '.', '_', '-')");
    }

    // a child never gets more than its parent: this turn's tools, `delegate` only while a child could still use it
    const childMayDelegate = parent.depth + 1 < limits.maxDepth;
    const mine = parent.tools.filter((name) => name !== DELEGATE_TOOL || childMayDelegate);
    const asked = stringList(args, 'tools');
    if (asked) {
      if (asked.includes(DELEGATE_TOOL) && !childMayDelegate) {
        return toolError(`'delegate' cannot be given to a sub-agent: sub-agents cannot delegate further (the depth limit is ${limits.maxDepth}).`);
      }
      const missing = asked.filter((name) => !mine.includes(name) && !this.callableDeferred(parent, name));
      if (missing.length > 0) {
        return toolError(
          `${missing.map((name) => `'${name}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among your tools in this turn, ` +
            `so ${missing.length === 1 ? 'it' : 'they'} cannot be given to a sub-agent. Your tools: ${mine.join(', ')}.`,
        );
      }
    }
    const tools = asked ?? mine;
    if (skills.length > 0 && !tools.includes('skill_load')) {
      return toolError("'skills' needs the skill_load tool among the sub-agent's tools (and yours).");
    }
    const request: DelegateRequest = { callId: ctx.callId, task, tools, skills, maxIterations, maxTokens };
    return this.runs.run(parent, request, ctx.untrustedSources ?? []);
  }
}
