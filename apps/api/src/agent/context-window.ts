/**
 * The context window of a chat turn (openspec agent-runner "Requirement: Cacheable request prefix" and "Requirement:
 * Old tool results pruned from the context"): what of the history the model gets, chosen so that each request starts
 * with the previous request's bytes — providers bill cached prompt tokens at a fraction, and their caches match the
 * prompt as rendered (tools, system prompt, messages in order) from its first byte.
 *
 * A chat's context advances in epochs counted in user turns of the history the model sees (the kept tail after a
 * consolidation). At each context boundary — the chat's first turn in this server process, every
 * CONTEXT_BOUNDARY_TURNS turns once `keepTurns` turns are exceeded, after a consolidation — two things change at once:
 * - the tool results of the turns older than the last `keepTurns` (CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS, 3) are
 *   replaced by a short stub in the model request (the history on disk keeps them whole), and stay so replaced, the
 *   same way, until the next boundary prunes the next batch;
 * - the chat's system prompt snapshot (SOUL.md + MEMORY.md, system-prompt.ts) is taken again.
 * Between two boundaries the request is the previous one with the new messages appended. Pruning one turn at a time
 * would rewrite the request near its start on every turn; pruning a batch at a boundary costs one cache miss per
 * CONTEXT_BOUNDARY_TURNS turns. Everything here is a function of the history alone: deterministic, restart-proof.
 */
import type { ChatMessage } from '../common/chat-message';
import { SUMMARY_MESSAGE_PREFIX } from '../memory/history-record';

/** the default of CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS: previous user turns whose tool results stay whole */
export const DEFAULT_KEEP_TOOL_RESULTS_TURNS = 3;
/** user turns between two context boundaries (the batch pruned at once) */
export const CONTEXT_BOUNDARY_TURNS = 8;
/** a tool result this short is never pruned (its stub would not be shorter) */
export const PRUNE_MIN_CHARS = 300;

/** the id the tool-output budget's preview names (tool-output-budget.ts `artifactPreview`) */
const ARTIFACT_MARKER = /The whole result is kept as artifact "([\w.-]{1,128})"/u;

export interface ContextWindow {
  /** the history as the model gets it: old tool results stubbed (a new array; the input is not changed) */
  messages: ChatMessage[];
  /** identifies the epoch: it changes exactly at a context boundary (the system prompt snapshot's key) */
  boundary: string;
  /** user turns of the history whose tool results are stubbed */
  prunedTurns: number;
}

/** Previous user turns whose tool results are stubbed when the history holds `turns` of them. */
export function prunedTurnCount(turns: number, keepTurns: number): number {
  const keep = Math.max(0, Math.floor(keepTurns));
  if (turns < keep + CONTEXT_BOUNDARY_TURNS) return 0;
  return Math.floor((turns - keep) / CONTEXT_BOUNDARY_TURNS) * CONTEXT_BOUNDARY_TURNS;
}

/** The stub that stands for a pruned tool result in the model request. */
export function prunedToolResultStub(name: string, content: string): string {
  const chars = content.length.toLocaleString('en-US');
  const artifact = ARTIFACT_MARKER.exec(content)?.[1];
  const where = artifact
    ? `the whole result is artifact "${artifact}": read it with read_artifact ${JSON.stringify({ id: artifact })}`
    : 'it is kept in the chat history; call the tool again if you need it';
  return `[tool result of ${name || 'a tool'} pruned from the context; ${chars} characters; ${where}]`;
}

/**
 * The context window of a turn whose history (previous turns, as the model sees them) is `history`. Only `tool`
 * messages change (their content); every assistant tool call keeps its tool message, so the request stays valid.
 */
export function contextWindow(history: readonly ChatMessage[], keepTurns: number): ContextWindow {
  const userIndexes: number[] = [];
  for (const [index, message] of history.entries()) if (message.role === 'user') userIndexes.push(index);
  const prunedTurns = prunedTurnCount(userIndexes.length, keepTurns);
  // the messages before the first user turn that stays whole (a leading summary message belongs to no turn)
  const end = prunedTurns > 0 ? (userIndexes[prunedTurns] ?? history.length) : 0;
  const messages = history.map((message, index) =>
    index < end && message.role === 'tool' && message.content.length >= PRUNE_MIN_CHARS
      ? { ...message, content: prunedToolResultStub(message.name, message.content) }
      : message,
  );
  const epoch = prunedTurns / CONTEXT_BOUNDARY_TURNS;
  // a consolidation starts the history with a new summary message: a boundary of its own
  const first = history[0];
  const summary = first?.role === 'assistant' && first.content.startsWith(SUMMARY_MESSAGE_PREFIX);
  const head = summary ? `${first.content.length}:${first.content.slice(0, 200)}` : '';
  return { messages, boundary: `${epoch}|${head}`, prunedTurns };
}
