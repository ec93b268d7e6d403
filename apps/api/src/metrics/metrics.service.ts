/**
 * Operator metrics in the Prometheus text format (openspec metrics). This module only listens: turn, tool and approval
 * counters come from `ChatService.events$` (the same events the WebSocket clients get), model calls from the
 * `model_call.recorded` app event of the usage ledger, and the gauges (WebSocket connections, MCP servers by state) are
 * read from the gateway and the MCP service when a scrape collects them. No feature module imports this folder.
 *
 * Labels are bounded: outcomes, error codes of the contract list, decisions, states, providers, purposes, and the tool
 * and model names of the configuration. Never a chat id, a call id or any text a user or the model wrote. Every update is
 * O(1) per event; streamed deltas pass through without any work.
 */
import {
  isServerErrorCode,
  type McpServerStatus,
  type ServerEvent,
  type UsageRecord,
} from '@cashcode/contracts';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { ToolRegistry } from '../agent/tool-registry';
import { ChatGateway } from '../chat/chat.gateway';
import { ChatService } from '../chat/chat.service';
import {
  AGENT_RUNAWAY_EVENT,
  AUTOMATION_RUN_ENDED_EVENT,
  MODEL_CALL_RECORDED_EVENT,
  type AgentRunawayEvent,
  type AutomationRunEndedEvent,
} from '../events/app-events';
import { OnAppEvent } from '../events/event-bus';
import { McpService } from '../mcp/mcp.service';

/** Prefix of every metric name, the process metrics of prom-client included. */
export const METRICS_PREFIX = 'cashcode_';

/** Every MCP connection state, so that a state without a server reads 0 instead of vanishing from the scrape. */
const MCP_STATES: readonly McpServerStatus[] = ['disconnected', 'connecting', 'connected', 'error', 'reconnecting', 'needs_auth'];

/** Turns run for seconds to minutes (tool calls, approvals waiting for the user). */
const TURN_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** One model request: from the first byte sent to the end of its stream. */
const MODEL_CALL_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];

/** The label of a tool that is not registered (a name the model made up): one series for all of them. */
export const UNKNOWN_TOOL_LABEL = 'unknown';
/** The `code` label of a turn error whose code is not in the contract list (libs/contracts/src/error-codes.ts). */
export const OTHER_ERROR_CODE_LABEL = 'other';
/** Model names come from the configuration; cut anyway, so that one odd entry cannot make a huge label. */
const MAX_MODEL_LABEL_CHARS = 128;

@Injectable()
export class MetricsService implements OnModuleInit, OnModuleDestroy {
  /** This app's own registry (never prom-client's global one: several apps in one process must not collide). */
  readonly registry = new Registry();
  private readonly turns: Counter<'outcome' | 'code'>;
  private readonly turnDuration: Histogram<'outcome'>;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly approvals: Counter<'decision' | 'by'>;
  private readonly modelCalls: Counter<'provider' | 'model' | 'purpose' | 'outcome'>;
  private readonly modelTokens: Counter<'provider' | 'model' | 'purpose' | 'outcome' | 'type'>;
  private readonly modelCallDuration: Histogram<'provider' | 'model' | 'purpose' | 'outcome'>;
  private readonly runaways: Counter<'reason' | 'outcome'>;
  private readonly automationRuns: Counter<'outcome' | 'trigger'>;
  private subscription: Subscription | null = null;

  constructor(
    private readonly chat: ChatService,
    gateway: ChatGateway,
    mcp: McpService,
    private readonly tools: ToolRegistry,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRICS_PREFIX });
    this.turns = new Counter({
      name: `${METRICS_PREFIX}turns_total`,
      help: 'Chat turns that ended, by outcome (ok, error, cancelled); errors carry their machine-readable code.',
      labelNames: ['outcome', 'code'],
      registers,
    });
    this.turnDuration = new Histogram({
      name: `${METRICS_PREFIX}turn_duration_seconds`,
      help: 'Duration of the chat turns that ran to their end (outcome ok or cancelled), from the done event.',
      labelNames: ['outcome'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.toolCalls = new Counter({
      name: `${METRICS_PREFIX}tool_calls_total`,
      help: 'Tool calls that produced a result, by tool and outcome (ok, error; a denied call is an error).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.approvals = new Counter({
      name: `${METRICS_PREFIX}approval_decisions_total`,
      help: 'Approval decisions, by decision (allow_once, allow_always, deny) and by whom (user, policy, timeout, cancel).',
      labelNames: ['decision', 'by'],
      registers,
    });
    this.modelCalls = new Counter({
      name: `${METRICS_PREFIX}model_calls_total`,
      help: 'Model calls recorded by the usage ledger, by provider, model, purpose and outcome (ok, error, cancelled, refused).',
      labelNames: ['provider', 'model', 'purpose', 'outcome'],
      registers,
    });
    this.modelTokens = new Counter({
      name: `${METRICS_PREFIX}model_tokens_total`,
      help: 'Tokens of the recorded model calls, by type: prompt, cached (the part of prompt served from the cache), completion.',
      labelNames: ['provider', 'model', 'purpose', 'outcome', 'type'],
      registers,
    });
    this.modelCallDuration = new Histogram({
      name: `${METRICS_PREFIX}model_call_duration_seconds`,
      help: 'Duration of the recorded model calls.',
      labelNames: ['provider', 'model', 'purpose', 'outcome'],
      buckets: MODEL_CALL_BUCKETS,
      registers,
    });
    this.runaways = new Counter({
      name: `${METRICS_PREFIX}runaway_guard_total`,
      help: 'Turns whose tool calls the runaway guard stopped, by reason (repeated_call, tool_call_ceiling) and outcome (answered, stopped).',
      labelNames: ['reason', 'outcome'],
      registers,
    });
    this.automationRuns = new Counter({
      name: `${METRICS_PREFIX}automation_runs_total`,
      help: 'Automation runs that ended, by outcome (ok, error, skipped, budget_exceeded, timeout, runaway_stopped, cancelled) and trigger (schedule, manual, missed).',
      labelNames: ['outcome', 'trigger'],
      registers,
    });
    new Gauge({
      name: `${METRICS_PREFIX}ws_connections`,
      help: 'WebSocket connections of the chat gateway open now.',
      registers,
      collect() {
        this.set(gateway.connectionCount);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}mcp_servers`,
      help: 'MCP servers of the catalog, by connection state.',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = mcp.statusCounts();
        for (const state of MCP_STATES) this.set({ state }, counts.get(state) ?? 0);
      },
    });
  }

  onModuleInit(): void {
    this.subscription = this.chat.events$.subscribe(({ event }) => this.onChatEvent(event));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  /** The Content-Type of `render()` (the Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text a scrape gets; the gauges are collected now. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** One chat event: a switch on its name, at most one counter or histogram update. */
  private onChatEvent(event: ServerEvent): void {
    switch (event.event) {
      case 'done': {
        const outcome = event.cancelled === true ? 'cancelled' : 'ok';
        this.turns.inc({ outcome });
        this.turnDuration.observe({ outcome }, event.duration_sec);
        return;
      }
      case 'error':
        this.turns.inc({
          outcome: 'error',
          code: event.code !== undefined && isServerErrorCode(event.code) ? event.code : OTHER_ERROR_CODE_LABEL,
        });
        return;
      case 'tool_result':
        this.toolCalls.inc({
          tool: this.tools.has(event.tool_name) ? event.tool_name : UNKNOWN_TOOL_LABEL,
          outcome: event.ok === false ? 'error' : 'ok',
        });
        return;
      case 'approval_resolved':
        this.approvals.inc({ decision: event.decision, by: event.by });
        return;
      default:
        return;
    }
  }

  /** The runaway guard stopped a turn's tool calls (its `runaway_stopped` errors also count in turns_total). */
  @OnAppEvent(AGENT_RUNAWAY_EVENT)
  onRunaway(event: AgentRunawayEvent): void {
    this.runaways.inc({ reason: event.reason, outcome: event.outcome });
  }

  /** An automation run ended (skipped due times included). */
  @OnAppEvent(AUTOMATION_RUN_ENDED_EVENT)
  onAutomationRunEnded(event: AutomationRunEndedEvent): void {
    this.automationRuns.inc({ outcome: event.outcome, trigger: event.trigger });
  }

  /** One model call of the usage ledger: a call count, three token counts and a duration. */
  @OnAppEvent(MODEL_CALL_RECORDED_EVENT)
  onModelCallRecorded(record: UsageRecord): void {
    const labels = {
      provider: record.provider,
      model: record.model.slice(0, MAX_MODEL_LABEL_CHARS),
      purpose: record.purpose,
      outcome: record.outcome,
    };
    this.modelCalls.inc(labels);
    this.modelTokens.inc({ ...labels, type: 'prompt' }, record.prompt_tokens);
    this.modelTokens.inc({ ...labels, type: 'cached' }, record.cached_tokens);
    this.modelTokens.inc({ ...labels, type: 'completion' }, record.completion_tokens);
    this.modelCallDuration.observe(labels, record.duration_ms / 1000);
  }
}
