import type { ChannelAdapter } from './channel-adapter';
import { AnswerStream, FIRST_SEND_DELAY_MS } from './answer-stream';

/** An adapter that records what it was asked to do; `render` splits every 10 characters. */
function recordingAdapter() {
  const calls: Array<{ op: 'send' | 'edit'; id: string; text: string }> = [];
  let next = 1;
  const adapter = {
    kind: 'telegram',
    account: 'bot',
    render: (markdown: string) => (markdown.match(/[\s\S]{1,10}/g) ?? []).map((part) => part),
    sendMessage: async (_conversation: string, text: string) => {
      const id = String(next++);
      calls.push({ op: 'send', id, text });
      return id;
    },
    editMessage: async (_conversation: string, id: string, text: string) => {
      calls.push({ op: 'edit', id, text });
    },
  } as unknown as ChannelAdapter;
  return { adapter, calls };
}

describe('AnswerStream', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a quick answer goes out as one message, without an edit', async () => {
    const { adapter, calls } = recordingAdapter();
    const stream = new AnswerStream(adapter, 'c', 1000);
    stream.append('Hello');
    stream.append(' you');
    await stream.finish();
    expect(calls).toEqual([{ op: 'send', id: '1', text: 'Hello you' }]);
  });

  it('sends the first text after the first-send delay, then edits at most once per interval, and ends with the whole text', async () => {
    const { adapter, calls } = recordingAdapter();
    const stream = new AnswerStream(adapter, 'c', 1000);
    stream.append('ab');
    await jest.advanceTimersByTimeAsync(FIRST_SEND_DELAY_MS);
    expect(calls).toEqual([{ op: 'send', id: '1', text: 'ab' }]);
    for (let i = 0; i < 5; i++) {
      stream.append('c');
      await jest.advanceTimersByTimeAsync(100);
    }
    // 500 ms after the send: no edit yet
    expect(calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(600);
    expect(calls[1]).toEqual({ op: 'edit', id: '1', text: 'abccccc' });
    stream.append('dddddd');
    await stream.finish('_(stopped)_');
    // the whole text, split by the adapter: the first message edited, a second one sent
    expect(calls.slice(2)).toEqual([
      { op: 'edit', id: '1', text: 'abcccccddd' },
      { op: 'send', id: '2', text: 'ddd\n\n_(sto' },
      { op: 'send', id: '3', text: 'pped)_' },
    ]);
  });

  it('a muted stream sends nothing more', async () => {
    const { adapter, calls } = recordingAdapter();
    const stream = new AnswerStream(adapter, 'c', 1000);
    stream.append('secret');
    stream.mute();
    await jest.advanceTimersByTimeAsync(2000);
    await stream.finish('done');
    expect(calls).toEqual([]);
  });
});
