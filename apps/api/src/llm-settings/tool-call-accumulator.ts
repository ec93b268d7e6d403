/**
 * Tool calls assembled from the pieces of a streamed chat completion, as real OpenAI-compatible servers send them
 * (openspec agent-runner "Requirement: Provider stream quirks"): normally one piece with `index`, `id` and the name,
 * then argument fragments with the same `index`. Tolerated as well: pieces without `index` (a piece that carries a new id,
 * or names a tool once the last call's arguments are complete JSON, starts a new call; others continue the last one), every call sent at the same `index` with
 * its own id, a name split across pieces or repeated in every piece, arguments as one whole string or as a JSON object instead of a
 * string, and calls without ids (the loop gives every call a unique id).
 */

/** A tool call as the model made it (an id may be empty or reused: the agent makes them unique). */
export interface ModelToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface Pending {
  id: string;
  name: string;
  arguments: string;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Arguments as text: a string as it is, an object or array as its JSON. */
function argumentText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return '';
}

function isCompleteJson(value: string): boolean {
  if (value.trim() === '') return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

export class ToolCallAccumulator {
  private readonly calls: Pending[] = [];
  /** the stream's `index` → the call it currently stands for */
  private readonly byIndex = new Map<number, Pending>();

  /** Adds one element of a delta's `tool_calls` list. */
  add(piece: unknown): void {
    if (typeof piece !== 'object' || piece === null) return;
    const record = piece as { index?: unknown; id?: unknown; function?: unknown };
    const fn = (typeof record.function === 'object' && record.function !== null ? record.function : {}) as {
      name?: unknown;
      arguments?: unknown;
    };
    const id = text(record.id);
    const name = text(fn.name);
    const args = argumentText(fn.arguments);
    const index = typeof record.index === 'number' && Number.isInteger(record.index) ? record.index : null;

    let call = index !== null ? this.byIndex.get(index) : this.calls[this.calls.length - 1];
    const newId = call !== undefined && id !== '' && call.id !== '' && id !== call.id;
    // without an index, a piece naming a tool after a call whose arguments are complete starts a new call
    const newName = index === null && call !== undefined && name !== '' && call.name !== '' && isCompleteJson(call.arguments);
    if (call === undefined || newId || newName) {
      call = { id: '', name: '', arguments: '' };
      this.calls.push(call);
      if (index !== null) this.byIndex.set(index, call);
    }
    if (id !== '' && call.id === '') call.id = id;
    // a name split across pieces is joined; one repeated in every piece is kept once
    if (name !== '' && name !== call.name) call.name += name;
    call.arguments += args;
  }

  /** The calls in the order the model made them (fragments with neither a name nor arguments are dropped). */
  result(): ModelToolCall[] {
    return this.calls
      .filter((call) => call.name !== '' || call.arguments !== '')
      .map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
}
