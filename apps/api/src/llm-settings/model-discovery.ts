/**
 * Model discovery for `/test` and `/models` (openspec llm-settings): `GET <base>/models` through the OpenAI client with
 * a timeout; at most the first 500 entries; string ids, trimmed, non-empty, ≤256 chars, de-duplicated, sorted
 * case-insensitively.
 */
import { isAnthropicClient, type ProviderClient } from './provider-client';
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
 * Whether a model list entry says the model takes image input. Providers say it in different ways: Ollama-style
 * `capabilities: ['vision', …]`, OpenRouter-style `architecture.input_modalities: ['image', …]`, a top-level
 * `input_modalities` / `modalities`, or LM Studio's `type: 'vlm'`.
 */
export function entryAcceptsImages(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const record = entry as Record<string, unknown>;
  const includes = (value: unknown, wanted: string) =>
    Array.isArray(value) && value.some((item) => typeof item === 'string' && item.toLowerCase() === wanted);
  const architecture = record['architecture'];
  return (
    includes(record['capabilities'], 'vision') ||
    includes(record['input_modalities'], 'image') ||
    includes(record['modalities'], 'image') ||
    (typeof architecture === 'object' && architecture !== null && includes((architecture as Record<string, unknown>)['input_modalities'], 'image')) ||
    record['type'] === 'vlm'
  );
}

/** The normalised ids of a model list and those its entries mark as taking images. */
export interface ModelCatalog {
  ids: string[];
  imageModels: Set<string>;
}

export function modelCatalog(entries: readonly unknown[]): ModelCatalog {
  const imageModels = new Set<string>();
  for (const entry of entries.slice(0, MODEL_LIST_MAX_ENTRIES)) {
    const raw = typeof entry === 'object' && entry !== null ? (entry as { id?: unknown }).id : undefined;
    if (typeof raw === 'string' && entryAcceptsImages(entry)) imageModels.add(raw.trim());
  }
  return { ids: normaliseModelIds(entries), imageModels };
}

/**
 * Lists the models of one provider. Rejects with the SDK's error (classify it with probeErrorMessage); a deadline
 * reached is always reported as APIConnectionTimeoutError, whatever the transport did.
 */
export async function discoverModels(client: ProviderClient, timeoutMs: number): Promise<string[]> {
  return (await discoverModelCatalog(client, timeoutMs)).ids;
}

/** {@link discoverModels} with the models the listing marks as taking images. */
export async function discoverModelCatalog(client: ProviderClient, timeoutMs: number): Promise<ModelCatalog> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    if (isAnthropicClient(client)) {
      // Anthropic's `GET /v1/models` (newest first, one page of up to 1000); every Claude model takes images
      const page = await client.models.list({ limit: 1000 }, { signal: controller.signal, timeout: timeoutMs, maxRetries: 0 });
      const catalog = modelCatalog(page.data);
      return { ids: catalog.ids, imageModels: new Set(catalog.ids) };
    }
    const page = await client.models.list({ signal: controller.signal, timeout: timeoutMs, maxRetries: 0 });
    const data: unknown = (page as { data?: unknown }).data;
    return modelCatalog(Array.isArray(data) ? (data as unknown[]) : []);
  } catch (error) {
    if (timedOut) throw new APIConnectionTimeoutError();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
