import type { ChatMessage } from '../common/chat-message';
import { artifactPreview } from './tool-output-budget';
import {
  CONTEXT_BOUNDARY_TURNS,
  contextWindow,
  PRUNE_MIN_CHARS,
  prunedToolResultStub,
  prunedTurnCount,
} from './context-window';

const BIG = 'r'.repeat(PRUNE_MIN_CHARS + 100);

/** `turns` user turns, each with one tool round (a large result) and an answer. */
function history(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let i = 1; i <= turns; i++) {
    messages.push({ role: 'user', content: `question ${i}` });
    messages.push({
      role: 'assistant',
      content: '[TOOL_CALLS: read_file]',
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, name: 'read_file', content: `${i}:${BIG}` });
    messages.push({ role: 'assistant', content: `answer ${i}` });
  }
  return messages;
}

const toolContents = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool').map((m) => m.content);
const stubbed = (content: string) => content.startsWith('[tool result of ');

describe('context window', () => {
  it('Scenario: tool results older than the kept turns are stubbed at a context boundary, whole in the history', () => {
    const keep = 3;
    const before = history(keep + CONTEXT_BOUNDARY_TURNS - 1);
    expect(toolContents(contextWindow(before, keep).messages).some(stubbed)).toBe(false);
    const input = history(keep + CONTEXT_BOUNDARY_TURNS);
    const copy = structuredClone(input);
    const window = contextWindow(input, keep);
    const tools = toolContents(window.messages);
    expect(window.prunedTurns).toBe(CONTEXT_BOUNDARY_TURNS);
    expect(tools.slice(0, CONTEXT_BOUNDARY_TURNS).every(stubbed)).toBe(true);
    expect(tools.slice(CONTEXT_BOUNDARY_TURNS).some(stubbed)).toBe(false);
    expect(tools[0]).toBe(`[tool result of read_file pruned from the context; ${(BIG.length + 2).toLocaleString('en-US')} characters; it is kept in the chat history; call the tool again if you need it]`);
    // the history itself is not changed
    expect(input).toEqual(copy);
    // the boundary key changed with the epoch
    expect(window.boundary).not.toBe(contextWindow(before, keep).boundary);
  });

  it('Scenario: pruning is deterministic and stable from turn to turn until the next boundary', () => {
    const keep = 3;
    const first = contextWindow(history(keep + CONTEXT_BOUNDARY_TURNS), keep);
    for (let extra = 1; extra < CONTEXT_BOUNDARY_TURNS; extra++) {
      const later = contextWindow(history(keep + CONTEXT_BOUNDARY_TURNS + extra), keep);
      // the earlier window is a prefix of the later one, byte for byte, and the epoch is the same
      expect(JSON.stringify(later.messages).startsWith(JSON.stringify(first.messages).slice(0, -1))).toBe(true);
      expect(later.boundary).toBe(first.boundary);
    }
    const next = contextWindow(history(keep + 2 * CONTEXT_BOUNDARY_TURNS), keep);
    expect(next.prunedTurns).toBe(2 * CONTEXT_BOUNDARY_TURNS);
    expect(next.boundary).not.toBe(first.boundary);
    expect(contextWindow(history(keep + 2 * CONTEXT_BOUNDARY_TURNS), keep)).toEqual(next);
  });

  it('Scenario: the kept turns’ tool results and short results are never pruned', () => {
    for (let turns = 0; turns <= 40; turns++) {
      const count = prunedTurnCount(turns, 3);
      expect(turns - count).toBeGreaterThanOrEqual(Math.min(turns, 3));
      expect(count % CONTEXT_BOUNDARY_TURNS).toBe(0);
    }
    const messages = history(3 + CONTEXT_BOUNDARY_TURNS);
    messages[2] = { role: 'tool', tool_call_id: 'call_1', name: 'read_file', content: 'short' };
    expect(toolContents(contextWindow(messages, 3).messages)[0]).toBe('short');
    // keep 0: only previous turns are pruned (the current turn's results are not in the history)
    expect(prunedTurnCount(CONTEXT_BOUNDARY_TURNS, 0)).toBe(CONTEXT_BOUNDARY_TURNS);
  });

  it('Scenario: a consolidation is a context boundary; the first turns of a chat are not', () => {
    const key = (messages: ChatMessage[]) => contextWindow(messages, 3).boundary;
    expect(key([])).toBe(key(history(1)));
    expect(key(history(1))).toBe(key(history(5)));
    const summary: ChatMessage = { role: 'assistant', content: '[History summary] the user read files' };
    const consolidated = [summary, ...history(2)];
    expect(key(consolidated)).not.toBe(key(history(2)));
    expect(key([summary, ...history(3)])).toBe(key(consolidated));
    expect(key([{ role: 'assistant', content: '[History summary] a later summary' }, ...history(2)])).not.toBe(key(consolidated));
  });

  it('Scenario: every assistant tool call keeps its tool message after pruning', () => {
    const window = contextWindow(history(3 + 2 * CONTEXT_BOUNDARY_TURNS), 3);
    const answered = new Set(window.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
    const calls = window.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    expect(calls.length).toBe(3 + 2 * CONTEXT_BOUNDARY_TURNS);
    for (const id of calls) expect(answered.has(id)).toBe(true);
    expect(window.messages.map((m) => m.role)).toEqual(history(3 + 2 * CONTEXT_BOUNDARY_TURNS).map((m) => m.role));
  });

  it('Scenario: the stub of a pruned artifact preview names the artifact for read_artifact', () => {
    const preview = artifactPreview('z'.repeat(20_000), 'call_abc');
    expect(prunedToolResultStub('exec', preview)).toBe(
      `[tool result of exec pruned from the context; ${preview.length.toLocaleString('en-US')} characters; the whole result is artifact "call_abc": read it with read_artifact {"id":"call_abc"}]`,
    );
  });
});
