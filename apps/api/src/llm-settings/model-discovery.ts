/**
 * Model discovery for `/test` and `/models` (openspec llm-settings): `GET <base>/models` through the OpenAI client with
 * a timeout; at most the first 500 entries; string ids, trimmed, non-empty, ≤256 chars, de-duplicated, sorted
 * case-insensitively.
 */
import type OpenAI from 'openai';
import { APIConnectionTimeoutError } from 'openai';

export const MODEL_LIST_MAX_ENTRIES = 500;
export const MODEL_ID_MAX_CHARS = 256;

function codePointLength(text: string): number {
  let count = 0;
  for (const _char of text) count += 1;
  return count;
}

function compareIgnoringCase(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Applies the rules of openspec llm-settings "Requirement: Model discovery" to the raw `data` entries of a model list
 * response.
 */
export function normaliseModelIds(entries: readonly unknown[]): string[] {
  const seen = new Set<string>();
  const ids: string[] = [];
  for (const entry of entries.slice(0, MODEL_LIST_MAX_ENTRIES)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const raw = (entry as { id?: unknown }).id;
    if (typeof raw !== 'string') continue;
    const id = raw.trim();
    if (id === '' || codePointLength(id) > MODEL_ID_MAX_CHARS || seen.has(id)) continue;
    seen.add(id);
    ids.push(id);
  }
  // Array.prototype.sort is stable: ids equal ignoring case keep the provider's order.
  return ids.sort(compareIgnoringCase);
}

/**
 * Lists the models of one provider. Rejects with the SDK's error (classify it with probeErrorMessage); a deadline
 * reached is always reported as APIConnectionTimeoutError, whatever the transport did.
 */
export async function discoverModels(client: OpenAI, timeoutMs: number): Promise<string[]> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const page = await client.models.list({ signal: controller.signal, timeout: timeoutMs, maxRetries: 0 });
    const data: unknown = (page as { data?: unknown }).data;
    return normaliseModelIds(Array.isArray(data) ? (data as unknown[]) : []);
  } catch (error) {
    if (timedOut) throw new APIConnectionTimeoutError();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
