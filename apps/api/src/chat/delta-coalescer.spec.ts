import type { ServerEvent } from '@cashcode/contracts';
import { DeltaCoalescer } from './delta-coalescer';

const delta = (chatId: string, text: string, streamId = 1): ServerEvent => ({ event: 'delta', chat_id: chatId, text, stream_id: streamId });
const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('DeltaCoalescer', () => {
  it('Scenario: deltas of one tick become one delta event', async () => {
    const sent: [string, ServerEvent][] = [];
    const coalescer = new DeltaCoalescer((chatId, event) => sent.push([chatId, event]));
    coalescer.push('a', delta('a', 'Hel'));
    coalescer.push('a', delta('a', 'lo, '));
    coalescer.push('a', delta('a', 'world'));
    expect(sent).toEqual([]);
    await nextTick();
    expect(sent).toEqual([['a', delta('a', 'Hello, world')]]);
    coalescer.push('a', delta('a', '!'));
    await nextTick();
    expect(sent).toEqual([['a', delta('a', 'Hello, world')], ['a', delta('a', '!')]]);
  });

  it('Scenario: another event sends the pending delta first', async () => {
    const sent: [string, ServerEvent][] = [];
    const coalescer = new DeltaCoalescer((chatId, event) => sent.push([chatId, event]));
    const toolCall: ServerEvent = { event: 'tool_call', chat_id: 'a', tool_name: 'list_dir', stream_id: 1, call_id: 'c1', arguments: {} } as ServerEvent;
    coalescer.push('b', delta('b', 'other chat'));
    coalescer.push('a', delta('a', 'before'));
    coalescer.push('a', toolCall);
    expect(sent).toEqual([['a', delta('a', 'before')], ['a', toolCall]]);
    // a new stream id of the same chat is not merged into the previous stream's text
    coalescer.push('a', delta('a', 'x', 1));
    coalescer.push('a', delta('a', 'y', 2));
    await nextTick();
    const of = (chatId: string) => sent.slice(2).filter(([id]) => id === chatId).map(([, event]) => event);
    expect(of('a')).toEqual([delta('a', 'x', 1), delta('a', 'y', 2)]);
    expect(of('b')).toEqual([delta('b', 'other chat')]);
  });
});
