/**
 * The `arguments` field of a WS `tool_call` event (a CashCode addition to the original wire protocol): the model's
 * argument JSON with secrets redacted (common/redact: secret key/value pairs, bearer tokens, sk- keys, registered
 * secret values), truncated to 500 code points.
 */
import { redactSecrets } from './redact';
import { firstCodePoints } from './trim';

export const ARGUMENT_PREVIEW_MAX_CHARS = 500;

/** Redacted and truncated argument text for clients; never more than 500 code points. */
export function argumentPreview(rawArguments: string): string {
  const redacted = redactSecrets(rawArguments);
  const head = firstCodePoints(redacted, ARGUMENT_PREVIEW_MAX_CHARS);
  if (!head.cut) return redacted;
  return firstCodePoints(head.text, ARGUMENT_PREVIEW_MAX_CHARS - 1).text + '…';
}
