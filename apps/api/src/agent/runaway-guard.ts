/**
 * The runaway guard of a turn (openspec agent-runner "Requirement: Runaway guard"): a model that keeps calling the same
 * tool with the same arguments and getting the same result (a repeated failure included), or that passes the turn's
 * ceiling of tool calls, is stopped. The loop then gives it one instruction to answer with what it has and calls it
 * once more without tools; a model that still asks for tools ends the turn with `runaway_stopped`.
 *
 * One guard per turn (or per child run). It keeps one counter per distinct call (keyed by a digest of the tool name,
 * the canonical arguments, the outcome and the result text), so its memory is bounded by the ceiling.
 */
import { createHash } from 'node:crypto';
import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import type { ToolCallRecord } from '../memory/memory.types';
import type { ToolListener } from './tool-executor';
import type { ToolExecution } from './tool-registry';

export interface RunawayLimits {
  /** identical calls (tool, arguments and result) in one turn that stop the loop (CASHCODE_TOOL_REPEAT_LIMIT, 3) */
  repeatLimit: number;
  /** tool calls one turn may run (CASHCODE_MAX_TOOL_CALLS, 50) */
  maxToolCalls: number;
}

export const DEFAULT_RUNAWAY_LIMITS: Readonly<RunawayLimits> = { repeatLimit: 3, maxToolCalls: 50 };

export type RunawayReason = 'repeated_call' | 'tool_call_ceiling';

export interface RunawayTrip {
  reason: RunawayReason;
  /** the repeated tool (repeated_call only) */
  tool?: string;
  /** how many times the call repeated, or the turn's tool calls so far */
  count: number;
}

/** The instruction the model gets once the guard trips (for the model only; never persisted). */
export function runawayNudge(trip: RunawayTrip): string {
  const why =
    trip.reason === 'repeated_call'
      ? `The tool ${trip.tool ?? ''} was called ${trip.count} times with the same arguments and gave the same result each time.`
      : `This turn reached its limit of ${trip.count} tool calls.`;
  return `[System] ${why} Tools are no longer available in this turn. Answer now with what you have, and say what is left undone.`;
}

/** The text of a call the ceiling kept from running (the model gets it as the call's failed result). */
export function notRunResult(limit: number): string {
  return `Error: not run: this turn reached its limit of ${limit} tool calls.`;
}

/** The turn ended because the model kept asking for tools after the guard's instruction to answer. */
export class RunawayStoppedError extends DomainError<'runaway_stopped'> {
  constructor(readonly trip: RunawayTrip) {
    super(
      'runaway_stopped',
      trip.reason === 'repeated_call'
        ? `The turn was stopped: the model repeated the same ${trip.tool ?? 'tool'} call ${trip.count} times and kept calling tools after it was told to answer.`
        : `The turn was stopped: the model reached the limit of ${trip.count} tool calls and kept calling tools after it was told to answer.`,
      { status: HttpStatus.UNPROCESSABLE_ENTITY },
    );
  }
}

/** What the guard reports, for the log and the metrics (the loop passes it on). */
export interface RunawayReport {
  reason: RunawayReason;
  /** `answered`: the model answered after the instruction; `stopped`: it kept calling and the turn ended */
  outcome: 'answered' | 'stopped';
}

/** Arguments as a stable string: parsed JSON with sorted keys, else the raw text. */
function canonicalArguments(raw: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(raw) as unknown));
  } catch {
    return raw;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

export class RunawayGuard {
  readonly limits: RunawayLimits;
  private readonly repeats = new Map<string, number>();
  private calls = 0;
  private trip: RunawayTrip | null = null;

  /** Limits that are absent or not finite take the defaults; a repeat limit is at least 2, a ceiling at least 1. */
  constructor(limits: Partial<RunawayLimits> = {}) {
    const given = (value: number | undefined, fallback: number) => (value !== undefined && Number.isFinite(value) ? Math.floor(value) : fallback);
    this.limits = {
      repeatLimit: Math.max(2, given(limits.repeatLimit, DEFAULT_RUNAWAY_LIMITS.repeatLimit)),
      maxToolCalls: Math.max(1, given(limits.maxToolCalls, DEFAULT_RUNAWAY_LIMITS.maxToolCalls)),
    };
  }

  /** Why the guard stopped the loop (null while it has not). */
  get tripped(): RunawayTrip | null {
    return this.trip;
  }

  /** How many of a message's calls may still run under the ceiling (the first ones, in order). */
  admit(count: number): number {
    return Math.max(0, Math.min(count, this.limits.maxToolCalls - this.calls));
  }

  /**
   * The calls past the ceiling get a failed result without running; the listener sees them like any refused call
   * (a card and its result), so the client's view matches the history.
   */
  notRun(calls: readonly ToolCallRecord[], listener: ToolListener): ToolExecution[] {
    const text = notRunResult(this.limits.maxToolCalls);
    return calls.map((call) => {
      listener.toolCall({ callId: call.id, name: call.function.name, arguments: '' });
      listener.toolResult({ callId: call.id, name: call.function.name, result: text, ok: false, durationMs: 0 });
      return { name: call.function.name, model: text, public: text, persisted: text, ok: false, durationMs: 0 };
    });
  }

  /** Counts a round's calls and results; returns the trip when this round stopped the loop. */
  recordRound(calls: readonly ToolCallRecord[], results: readonly ToolExecution[]): RunawayTrip | null {
    if (this.trip) return this.trip;
    let repeated: RunawayTrip | null = null;
    for (const [index, call] of calls.entries()) {
      const result = results[index];
      if (!result) continue;
      this.calls++;
      const key = createHash('sha256')
        .update(call.function.name)
        .update('\0')
        .update(canonicalArguments(call.function.arguments))
        .update(result.ok ? '\0ok\0' : '\0failed\0')
        .update(result.public)
        .digest('base64');
      const count = (this.repeats.get(key) ?? 0) + 1;
      this.repeats.set(key, count);
      if (count >= this.limits.repeatLimit && repeated === null) {
        repeated = { reason: 'repeated_call', tool: call.function.name, count };
      }
    }
    if (repeated) this.trip = repeated;
    else if (this.calls >= this.limits.maxToolCalls) this.trip = { reason: 'tool_call_ceiling', count: this.limits.maxToolCalls };
    return this.trip;
  }
}
