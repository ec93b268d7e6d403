/**
 * Text the agent adds for the model only. The model sees it (and it stays in history.jsonl, so later turns send it
 * again), but no client ever shows it: the live `tool_result` and the public message history strip it.
 */

/** Suffix appended to every registry/tool error the model sees (openspec agent-runner). */
export const TOOL_ERROR_HINT = '\n\n[Analyze the error above and try a different approach.]';

/** `text` without a trailing model hint (what a client shows of a tool result). */
export function withoutModelHints(text: string): string {
  return text.endsWith(TOOL_ERROR_HINT) ? text.slice(0, -TOOL_ERROR_HINT.length) : text;
}
