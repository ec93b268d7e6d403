/**
 * Runs the child of one `delegate` call (openspec subagents) through the same AgentRunner as its parent turn — the
 * same tool executor, ToolGate (approvals), ModelGateway (spend limits before each call, the usage ledger with purpose
 * `subagent` and the parent chat's id) — with a fresh context: the SOUL, a section saying what it is for, and the task
 * as its user message. It never sees the parent's history.
 *
 * - The children of one parent run share its concurrency limit (CASHCODE_SUBAGENT_CONCURRENCY): more wait.
 * - The child's signal follows the parent's: a cancelled turn cancels every child.
 * - Its progress reaches the parent's listener as `subagent_*` notices; its approval requests go to the parent chat
 *   naming it (the loop adds `subagent` to them).
 * - Its end: the answer with a short account of its tool calls, or a failure (model error, spend limit, its token
 *   budget or an automation run's, iteration limit) as a tool error for the parent; the transcript is stored in the
 *   chat's directory either way.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SubagentOutcome, SubagentRef, SubagentTranscript, UntrustedSource } from '@cashcode/contracts';
import { DomainError } from '../../common/domain-error';
import { localIsoWithOffset } from '../../common/local-iso-time';
import { errorType, formatEvent } from '../../common/log-format';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { ArtifactStore } from '../../memory/artifact.store';
import { DEFAULT_SOUL, MemoryDocuments } from '../../memory/memory-documents';
import { AgentCancelledError, AgentRunner, ChildRunFailedError, emptyUsage, type ActiveRun, type PartialTurn, type RunOutcome } from '../agent-runner';
import type { ToolResult } from '../agent-tool';
import { ToolExecutionCancelledError } from '../tool-registry';
import { childListener } from './child-listener';
import { Semaphore } from './semaphore';
import { toolAccount, transcriptArtifactId, transcriptMessages } from './subagent-transcript';

/** What one delegate call asks for, checked (delegate.tool.ts). */
export interface DelegateRequest {
  callId: string;
  task: string;
  /** the child's tools: a subset of the parent run's, without `delegate` at the depth limit */
  tools: string[];
  skills: string[];
  maxIterations: number;
  /** the child's token budget: `max_tokens` lowered to CASHCODE_SUBAGENT_MAX_TOKENS (child-budget.ts) */
  maxTokens: number;
}

interface ChildEnd {
  outcome: SubagentOutcome;
  code?: string;
  detail?: string;
  run?: RunOutcome;
}

/** The section of the child's system prompt that says what it is for. */
export function subagentSection(request: DelegateRequest): string {
  const lines = [
    '## Sub-agent',
    'You are a sub-agent: another agent delegated one task to you. You do not see its conversation; everything you ' +
      'need is in the task. Work on the task with your tools, then answer with the result only: your final answer is ' +
      'returned to the agent that delegated it.',
    `Your tools: ${request.tools.length > 0 ? request.tools.join(', ') : 'none'}. You have at most ${request.maxIterations} rounds of tool calls ` +
      `and ${request.maxTokens.toLocaleString('en-US')} tokens.`,
  ];
  if (request.skills.length > 0) {
    lines.push(`Load these Skills with skill_load before you start: ${request.skills.join(', ')}.`);
  }
  return lines.join('\n');
}

@Injectable()
export class SubagentRuns {
  private readonly logger = new Logger('Subagents');
  /** the concurrency limit of each parent run's children, by the parent's signal */
  private readonly slots = new WeakMap<AbortSignal, Semaphore>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runner: AgentRunner,
    private readonly documents: MemoryDocuments,
    private readonly artifacts: ArtifactStore,
  ) {}

  /** Runs a child for the parent run; resolves with the parent's tool result. Rejects only on the parent's cancel. */
  async run(parent: ActiveRun, request: DelegateRequest, untrusted: readonly UntrustedSource[]): Promise<ToolResult> {
    const parentSignal = parent.request.signal;
    let slots = this.slots.get(parentSignal);
    if (!slots) {
      slots = new Semaphore(this.config.subagents.concurrency);
      this.slots.set(parentSignal, slots);
    }
    const release = await slots.acquire(parentSignal);
    try {
      return await this.runChild(parent, request, untrusted);
    } finally {
      release();
    }
  }

  private async runChild(parent: ActiveRun, request: DelegateRequest, untrusted: readonly UntrustedSource[]): Promise<ToolResult> {
    const { request: parentRequest } = parent;
    const parentSignal = parentRequest.signal;
    const ref: SubagentRef = { call_id: request.callId, task: request.task };
    const notify = parentRequest.listener.subagent?.bind(parentRequest.listener);
    const started = performance.now();
    const startedAt = new Date();
    const ids = { chatId: parentRequest.chatId, turnId: parentRequest.turnId };
    notify?.({ event: 'subagent_started', call_id: request.callId, task: request.task, tools: request.tools, max_iterations: request.maxIterations });
    this.logger.log(formatEvent('subagent.started', { call_id: request.callId, depth: parent.depth + 1, tools: request.tools.length }), ids);

    const soul = (await this.documents.readSoul()).trim() || DEFAULT_SOUL;
    // a signal of its own (the loop knows a run by it) that follows the parent's
    const signal = AbortSignal.any([parentSignal]);
    const end = await this.runner
      .run({
        client: parentRequest.client,
        provider: parentRequest.provider,
        model: parentRequest.model,
        messages: [
          { role: 'system', content: `${soul}\n\n${subagentSection(request)}` },
          { role: 'user', content: request.task },
        ],
        chatId: parentRequest.chatId,
        turnId: parentRequest.turnId,
        signal,
        ...(parentRequest.temporaryTools ? { temporaryTools: parentRequest.temporaryTools } : {}),
        ...(parentRequest.headless ? { headless: true } : {}),
        ...(parentRequest.requester === 'non_owner' ? { requester: 'non_owner' as const } : {}),
        // an automation's tool subset binds its children too (argument-level checks: which Skill, which MCP server)
        ...(parentRequest.toolAllowlist ? { toolAllowlist: parentRequest.toolAllowlist } : {}),
        ...(parentRequest.acceptsImages ? { acceptsImages: true } : {}),
        ...(parentRequest.temperature !== undefined ? { temperature: parentRequest.temperature } : {}),
        ...(parentRequest.maxTokens !== undefined ? { maxTokens: parentRequest.maxTokens } : {}),
        // a stateless `/v1` request has no chat: its children are recorded like it, without the throwaway id
        purpose: parentRequest.purpose === 'api' ? 'api' : 'subagent',
        child: { depth: parent.depth + 1, tools: new Set(request.tools), maxIterations: request.maxIterations, maxTokens: request.maxTokens, ref },
        untrustedSources: untrusted,
        listener: childListener(parentRequest.listener, ref),
      })
      .then(
        (run): ChildEnd =>
          run.iterationLimitReached
            ? {
                outcome: 'failed',
                code: 'iteration_limit',
                detail: `The sub-agent used its ${request.maxIterations} rounds of tool calls without a final answer.`,
                run,
              }
            : { outcome: 'ok', run },
        (err: unknown): ChildEnd => this.failure(err, parentSignal),
      );

    const durationMs = Math.round(performance.now() - started);
    const run = end.run;
    // the child's model calls count in the turn's usage and cost (`done`, the answer's stats)
    if (run && run.modelCalls > 0) parent.absorb(run.usage, run.cost ?? null);
    const usage = run?.usage ?? emptyUsage();
    notify?.({
      event: 'subagent_done',
      call_id: request.callId,
      outcome: end.outcome,
      ...(end.code ? { code: end.code } : {}),
      ...(end.detail ? { detail: end.detail } : {}),
      tool_calls: run?.toolCalls ?? 0,
      duration_ms: durationMs,
      usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
    });
    this.logger.log(formatEvent('subagent.finished', { call_id: request.callId, outcome: end.outcome, code: end.code, duration_ms: durationMs }), ids);
    if (end.outcome === 'cancelled') throw new ToolExecutionCancelledError();

    const answer = end.outcome === 'ok' ? (run?.content ?? '') : '';
    const transcript: SubagentTranscript = {
      call_id: request.callId,
      task: request.task,
      tools: request.tools,
      max_iterations: request.maxIterations,
      outcome: end.outcome,
      ...(end.code ? { code: end.code } : {}),
      ...(end.detail ? { detail: end.detail } : {}),
      answer,
      messages: transcriptMessages(request.task, run?.durable ?? [], answer),
      usage,
      ...(run?.cost ? { cost: run.cost } : {}),
      started_at: localIsoWithOffset(startedAt),
      duration_ms: durationMs,
    };
    const stored = await this.store(parentRequest.chatId, transcript, ids);
    return this.toolResult(end, transcript, stored, run?.untrustedSources ?? []);
  }

  /** How a child that threw ended: cancelled with its parent, or failed with a code the parent's model is told. */
  private failure(err: unknown, parentSignal: AbortSignal): ChildEnd {
    if (parentSignal.aborted || err instanceof AgentCancelledError) {
      return { outcome: 'cancelled', ...(err instanceof AgentCancelledError ? { run: partialRun(err.partial) } : {}) };
    }
    // what the child did before it failed still counts (its account, transcript and usage)
    if (err instanceof ChildRunFailedError) return { ...this.failure(err.reason, parentSignal), run: partialRun(err.partial) };
    if (err instanceof DomainError) return { outcome: 'failed', code: err.code, detail: err.message };
    this.logger.error(formatEvent('subagent.failed', { error_type: errorType(err) }));
    return { outcome: 'failed', code: 'internal_error', detail: 'The sub-agent failed because of an internal error.' };
  }

  private async store(chatId: string, transcript: SubagentTranscript, ids: { chatId: string; turnId: string }): Promise<boolean> {
    try {
      return await this.artifacts.saveArtifact(chatId, transcriptArtifactId(transcript.call_id), JSON.stringify(transcript));
    } catch (err) {
      this.logger.warn(formatEvent('subagent.transcript_failed', { call_id: transcript.call_id, error_type: errorType(err) }), ids);
      return false;
    }
  }

  /** The parent's tool result: the answer and the account, or the failure as a tool error (`Error…`, ok false). */
  private toolResult(end: ChildEnd, transcript: SubagentTranscript, stored: boolean, untrusted: UntrustedSource[]): ToolResult {
    const account = toolAccount(end.run?.durable ?? []);
    const where = stored ? `\nFull transcript: read_artifact id "${transcriptArtifactId(transcript.call_id)}".` : '';
    if (end.outcome !== 'ok') {
      const text = `Error: the sub-agent failed (${end.code ?? 'failed'}): ${end.detail ?? ''}\nIts work: ${account}.${where}`;
      return { model: text, ok: false };
    }
    const text = `Sub-agent answer:\n${transcript.answer}\n\nIts work: ${account}.${where}`;
    // what the child read from untrusted sources may shape its answer: the parent gets it framed, and the sources
    return { model: text, persisted: text, public: transcript.answer, ...(untrusted.length > 0 ? { untrusted } : {}) };
  }
}

/** The part of a cancelled or failed child that ran (for its `subagent_done` account). */
function partialRun(partial: PartialTurn): RunOutcome {
  return {
    content: partial.content,
    durable: partial.durable,
    usage: partial.usage,
    ...(partial.cost ? { cost: partial.cost } : {}),
    modelCalls: partial.usage.total_tokens > 0 ? 1 : 0,
    iterationLimitReached: false,
    toolCalls: partial.durable.filter((message) => message.role === 'tool').length,
    failedToolCalls: 0,
  };
}
