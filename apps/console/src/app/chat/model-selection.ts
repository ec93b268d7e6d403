/**
 * Model picker rules (openspec console): models grouped by provider, the choice remembered in localStorage under
 * `cashcode.llm.selection` and kept only while the server still lists it, else the server's last used model, else
 * the first listed model.
 */
import { LLM_PROVIDERS, type LlmModelEntry, type LlmProvider, type LlmSelection } from '@cashcode/contracts';

export const MODEL_SELECTION_STORAGE_KEY = 'cashcode.llm.selection';

export interface ModelGroup {
  provider: LlmProvider;
  models: string[];
  /** additive: the models of the group that take images (`accepts_images` of the listing); absent when none */
  imageModels?: string[];
}

export function groupModels(models: readonly LlmModelEntry[]): ModelGroup[] {
  return LLM_PROVIDERS.map((provider) => {
    const entries = models.filter((entry) => entry.provider === provider);
    const group: ModelGroup = { provider, models: entries.map((entry) => entry.id) };
    const imageModels = entries.filter((entry) => entry.accepts_images === true).map((entry) => entry.id);
    if (imageModels.length > 0) group.imageModels = imageModels;
    return group;
  }).filter((group) => group.models.length > 0);
}

/** Parses the stored preference; anything malformed is null. */
export function parseStoredSelection(raw: string | null): LlmSelection | null {
  if (raw === null) return null;
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== 'object' || value === null) return null;
    const { provider, model } = value as { provider?: unknown; model?: unknown };
    if (typeof provider !== 'string' || !LLM_PROVIDERS.includes(provider as LlmProvider)) return null;
    if (typeof model !== 'string' || model.trim() === '') return null;
    return { provider: provider as LlmProvider, model };
  } catch {
    return null;
  }
}

export function sameSelection(a: LlmSelection | null, b: LlmSelection | null): boolean {
  return a !== null && b !== null && a.provider === b.provider && a.model === b.model;
}

/**
 * The selection after a model list arrived: the preferred one (this browser's) if still listed, else the model the
 * server's last turn used if listed (a fresh browser), else the first model, else none.
 */
export function reconcileSelection(
  preferred: LlmSelection | null,
  models: readonly LlmModelEntry[],
  lastUsed: LlmSelection | null = null,
): LlmSelection | null {
  const listed = (selection: LlmSelection | null): selection is LlmSelection =>
    selection !== null && models.some((entry) => entry.provider === selection.provider && entry.id === selection.model);
  if (listed(preferred)) return preferred;
  if (listed(lastUsed)) return { provider: lastUsed.provider, model: lastUsed.model };
  const first = groupModels(models)[0];
  return first ? { provider: first.provider, model: first.models[0] } : null;
}

/** Stable option value for a <mat-select> */
export function selectionKey(selection: LlmSelection): string {
  return JSON.stringify({ provider: selection.provider, model: selection.model });
}
