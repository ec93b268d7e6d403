import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-ID';

/** A new request id: 32 lowercase hex characters (uuid4 without dashes, as the reference). */
export function newRequestId(): string {
  return randomUUID().replace(/-/g, '');
}
