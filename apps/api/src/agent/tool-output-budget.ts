/**
 * The tool-output budget (openspec agent-runner "Requirement: Tool output budget"): a tool result longer than the
 * budget (CASHCODE_TOOL_OUTPUT_BUDGET_CHARS, 8,000 characters by default) is kept whole as an artifact of the chat
 * (`<memory>/<chat>/artifacts/<id>.txt`), and the model and the history get a head and tail preview with the
 * artifact's id and how to page through it with `read_artifact`. A large result then costs its preview, not its whole
 * text, on this model call and on every later turn that re-sends the history.
 */
import { createHash } from 'node:crypto';
import { ARTIFACT_ID_PATTERN } from '../memory/artifact.store';

/** characters of the head and of the tail a preview keeps */
export const PREVIEW_HEAD_CHARS = 3_000;
export const PREVIEW_TAIL_CHARS = 1_000;
/** most characters one read_artifact call returns */
export const READ_ARTIFACT_MAX_CHARS = 20_000;
export const READ_ARTIFACT_TOOL = 'read_artifact';

/** Where artifacts are kept: the memory store (a chat's directory). */
export interface ArtifactSink {
  saveArtifact(chatId: string, id: string, text: string): Promise<boolean>;
}

/** A file-name-safe artifact id for a tool call id (hashed when the call id is not safe as is). */
export function artifactIdFor(callId: string): string {
  return ARTIFACT_ID_PATTERN.test(callId) ? callId : `call-${createHash('sha256').update(callId).digest('hex').slice(0, 24)}`;
}

/** The preview that stands for a whole result kept as artifact `id`. */
export function artifactPreview(text: string, id: string): string {
  const chars = Array.from(text);
  const head = chars.slice(0, PREVIEW_HEAD_CHARS).join('');
  const tail = chars.slice(-PREVIEW_TAIL_CHARS).join('');
  const omitted = chars.length - PREVIEW_HEAD_CHARS - PREVIEW_TAIL_CHARS;
  const call = JSON.stringify({ id, offset: PREVIEW_HEAD_CHARS, length: 8_000 });
  return (
    `${head}\n\n[… ${omitted.toLocaleString('en-US')} of ${chars.length.toLocaleString('en-US')} characters omitted. ` +
    `The whole result is kept as artifact "${id}"; read more with ${READ_ARTIFACT_TOOL} ${call} ` +
    `(offset and length in characters).]\n\n${tail}`
  );
}

/**
 * Applies the budget to one result: returns the preview to use instead of `text`, or null when the result fits (or
 * could not be kept, e.g. a stateless chat without a directory — then the result goes as it is).
 */
export async function budgetToolResult(
  sink: ArtifactSink,
  budgetChars: number,
  chatId: string,
  callId: string,
  toolName: string,
  text: string,
): Promise<string | null> {
  if (budgetChars <= 0 || toolName === READ_ARTIFACT_TOOL) return null;
  // cheap test first: a string's length is at least its number of code points
  if (text.length <= budgetChars || Array.from(text).length <= Math.max(budgetChars, PREVIEW_HEAD_CHARS + PREVIEW_TAIL_CHARS)) return null;
  const id = artifactIdFor(callId);
  if (!(await sink.saveArtifact(chatId, id, text))) return null;
  return artifactPreview(text, id);
}
