/**
 * Reasoning that arrives inside the answer text (openspec agent-runner "Requirement: Reasoning kept apart from the
 * answer"): Qwen3, DeepSeek R1 distills and some Ollama models open their content with a `<think>…</think>` block.
 * The block is the model's reasoning, not its answer: `ThinkTagSplitter` separates it from a stream whose pieces may
 * cut a tag anywhere, `stripThinkBlock` from a whole answer (background calls: titles, summaries, memory never carry
 * it).
 *
 * Only a block at the very start of the content counts (after blank space): a `<think>` later in an answer is text
 * the model wrote about tags. An unclosed block is reasoning to its end (the model never answered).
 */

const OPEN = '<think>';
const CLOSE = '</think>';

export interface SplitPiece {
  answer: string;
  reasoning: string;
}

type State = 'start' | 'thinking' | 'after' | 'answer';

/** Length of the longest suffix of `text` that is a proper prefix of `tag` (a tag cut by a piece boundary). */
function partialTagSuffix(text: string, tag: string): number {
  const max = Math.min(text.length, tag.length - 1);
  for (let length = max; length > 0; length--) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

/** Splits a streamed answer into answer text and the reasoning of a leading `<think>` block. */
export class ThinkTagSplitter {
  private state: State = 'start';
  private buffer = '';

  /** The answer and reasoning text a new piece of content releases (either may be empty). */
  push(piece: string): SplitPiece {
    const out: SplitPiece = { answer: '', reasoning: '' };
    if (piece === '') return out;
    if (this.state === 'answer') {
      out.answer = piece;
      return out;
    }
    this.buffer += piece;
    this.drain(out);
    return out;
  }

  /** What is still held back once the stream ended. */
  end(): SplitPiece {
    const out: SplitPiece = { answer: '', reasoning: '' };
    if (this.state === 'thinking') out.reasoning = this.buffer;
    else if (this.state === 'start') out.answer = this.buffer;
    this.buffer = '';
    this.state = 'answer';
    return out;
  }

  private drain(out: SplitPiece): void {
    if (this.state === 'start') {
      const lead = this.buffer.trimStart();
      if (lead.startsWith(OPEN)) {
        this.state = 'thinking';
        this.buffer = lead.slice(OPEN.length);
      } else if (lead === '' || OPEN.startsWith(lead)) {
        return; // blank space, or a tag not complete yet
      } else {
        out.answer += this.buffer;
        this.buffer = '';
        this.state = 'answer';
        return;
      }
    }
    if (this.state === 'thinking') {
      const close = this.buffer.indexOf(CLOSE);
      if (close < 0) {
        const keep = partialTagSuffix(this.buffer, CLOSE);
        out.reasoning += this.buffer.slice(0, this.buffer.length - keep);
        this.buffer = this.buffer.slice(this.buffer.length - keep);
        return;
      }
      out.reasoning += this.buffer.slice(0, close);
      this.buffer = this.buffer.slice(close + CLOSE.length);
      this.state = 'after';
    }
    if (this.state === 'after') {
      // the blank lines between the block and the answer belong to neither
      const rest = this.buffer.trimStart();
      this.buffer = '';
      if (rest !== '') {
        out.answer += rest;
        this.state = 'answer';
      }
    }
  }
}

/** A whole answer without its leading `<think>` block (an unclosed block leaves nothing). */
export function stripThinkBlock(text: string): string {
  const lead = text.trimStart();
  if (!lead.startsWith(OPEN)) return text;
  const close = lead.indexOf(CLOSE, OPEN.length);
  return close < 0 ? '' : lead.slice(close + CLOSE.length).trimStart();
}
