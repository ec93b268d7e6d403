/**
 * A sub-agent's transcript (openspec subagents "Requirement: Transcript"): the child's conversation without its system
 * prompt, kept whole in the parent chat's directory when the child ended, as `artifacts/subagent-<call_id>.txt` (JSON;
 * read_artifact can page through it too), and the short account of its tool calls the parent's model gets.
 */
import type { SubagentTranscript, SubagentTranscriptMessage } from '@cashcode/contracts';
import type { ChatMessage } from '../../common/chat-message';

/** the artifact id of a child's transcript */
export function transcriptArtifactId(callId: string): string {
  return `subagent-${callId}`;
}

/** The child's messages (task, tool rounds, answer) in the transcript's shape. */
export function transcriptMessages(task: string, durable: readonly ChatMessage[], answer: string): SubagentTranscriptMessage[] {
  const messages: SubagentTranscriptMessage[] = [{ role: 'user', content: task }];
  for (const message of durable) {
    if (message.role === 'assistant') {
      messages.push({
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls
          ? { tool_calls: message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })) }
          : {}),
      });
    } else if (message.role === 'tool') {
      messages.push({
        role: 'tool',
        content: message.content,
        tool_call_id: message.tool_call_id,
        name: message.name,
        ...(message.ok !== undefined ? { ok: message.ok } : {}),
        ...(message.duration_ms !== undefined ? { duration_ms: message.duration_ms } : {}),
      });
    }
  }
  if (answer !== '') messages.push({ role: 'assistant', content: answer });
  return messages;
}

/** `read_file ok, exec failed, read_file ok` → one line the parent's model reads (the first 20 calls, then a count). */
export function toolAccount(durable: readonly ChatMessage[]): string {
  const calls = durable.filter((message) => message.role === 'tool');
  if (calls.length === 0) return 'no tool calls';
  const shown = calls.slice(0, 20).map((call) => `${call.name} ${call.ok === false ? 'failed' : 'ok'}`);
  const more = calls.length > shown.length ? `, and ${calls.length - shown.length} more` : '';
  return `${calls.length} tool call${calls.length === 1 ? '' : 's'}: ${shown.join(', ')}${more}`;
}

/** A stored transcript parsed back, or null when the text is not one. */
export function parseTranscript(text: string): SubagentTranscript | null {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const record = value as Partial<SubagentTranscript>;
    return typeof record.call_id === 'string' && Array.isArray(record.messages) ? (record as SubagentTranscript) : null;
  } catch {
    return null;
  }
}
