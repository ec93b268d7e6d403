import { stripThinkBlock, ThinkTagSplitter, type SplitPiece } from './reasoning-split';

/** Feeds `pieces` and returns the joined answer and reasoning. */
function split(pieces: readonly string[]): SplitPiece {
  const splitter = new ThinkTagSplitter();
  const out: SplitPiece = { answer: '', reasoning: '' };
  for (const piece of [...pieces.map((p) => splitter.push(p)), splitter.end()]) {
    out.answer += piece.answer;
    out.reasoning += piece.reasoning;
  }
  return out;
}

describe('ThinkTagSplitter', () => {
  const text = '<think>\nThe user greets me.\n</think>\n\nHello there!';

  it('Scenario: a think block cut anywhere by the stream splits the same way', () => {
    const expected = { answer: 'Hello there!', reasoning: '\nThe user greets me.\n' };
    expect(split([text])).toEqual(expected);
    // every cut position, and one character at a time
    for (let cut = 1; cut < text.length; cut++) expect(split([text.slice(0, cut), text.slice(cut)])).toEqual(expected);
    expect(split([...text])).toEqual(expected);
  });

  it('leaves an answer without a leading block alone, a later <think> included', () => {
    expect(split(['Hi', ' <think>x</think> y'])).toEqual({ answer: 'Hi <think>x</think> y', reasoning: '' });
    expect(split(['  ', 'plain'])).toEqual({ answer: '  plain', reasoning: '' });
    expect(split(['<thi', 'nking is fun'])).toEqual({ answer: '<thinking is fun', reasoning: '' });
  });

  it('treats an unclosed block as reasoning to the end', () => {
    expect(split(['<think>still thinking', ' </thi'])).toEqual({ answer: '', reasoning: 'still thinking </thi' });
  });

  it('releases reasoning as it streams, holding back only a cut closing tag', () => {
    const splitter = new ThinkTagSplitter();
    expect(splitter.push('<think>abc</')).toEqual({ answer: '', reasoning: 'abc' });
    expect(splitter.push('think>answer')).toEqual({ answer: 'answer', reasoning: '' });
  });
});

describe('stripThinkBlock', () => {
  it('removes a leading block and nothing else', () => {
    expect(stripThinkBlock('<think>x</think>\n\nTitle')).toBe('Title');
    expect(stripThinkBlock('Title <think>x</think>')).toBe('Title <think>x</think>');
    expect(stripThinkBlock('<think>never closed')).toBe('');
  });
});
