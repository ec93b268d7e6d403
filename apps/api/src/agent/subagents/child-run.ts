/**
 * What makes a run of the agent loop (agent-runner.ts) a sub-agent's (openspec subagents); set by the delegate tool
 * (delegate.tool.ts). Apart from the loop so that this folder's files and the loop need not import each other's types.
 */
import type { SubagentRef, SubagentServerEvent } from '@cashcode/contracts';

export interface ChildRun {
  /** 1 for a child of a chat turn, 2 for a grandchild, … */
  depth: number;
  /** the only tools it is offered and may run: a subset of its parent turn's */
  tools: ReadonlySet<string>;
  /** model calls with tools; at the limit the child ends without a final call (`iterationLimitReached`) */
  maxIterations: number;
  /** total tokens its model calls may use together (its own grandchildren's included); checked before each call */
  maxTokens: number;
  /** the parent's `delegate` call and the task it gave (its approval requests name it) */
  ref: SubagentRef;
}


/** A sub-agent event as the loop's listener reports it; the chat adds its `chat_id` and `stream_id`. */
export type SubagentNotice = SubagentServerEvent extends infer E
  ? E extends SubagentServerEvent
    ? Omit<E, 'chat_id' | 'stream_id'>
    : never
  : never;
