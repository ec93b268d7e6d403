import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-ID';

/** A new request id: 32 lowercase hex characters (a uuid4 without dashes, the original server's format). */
export function newRequestId(): string {
  return randomUUID().replace(/-/g, '');
}
