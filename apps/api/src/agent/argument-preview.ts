/**
 * The `arguments` field of a WS `tool_call` event (DESIGN.md #3): the model's argument JSON with secrets redacted
 * (common/redact: secret key/value pairs, bearer tokens, sk- keys, registered secret values), truncated to 500 code
 * points.
 */
import { redactSecrets } from '../common/redact';

export const ARGUMENT_PREVIEW_MAX_CHARS = 500;

/** Redacted and truncated argument text for clients; never more than 500 code points. */
export function argumentPreview(rawArguments: string): string {
  const redacted = redactSecrets(rawArguments);
  const chars = Array.from(redacted);
  if (chars.length <= ARGUMENT_PREVIEW_MAX_CHARS) return redacted;
  return chars.slice(0, ARGUMENT_PREVIEW_MAX_CHARS - 1).join('') + '…';
}
