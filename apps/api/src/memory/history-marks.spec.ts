import { untrustedSourcesOfMessages } from '../common/untrusted-sources';
import { recordToMessage, summaryToMessage } from './history-record';

describe('untrusted marks in the history', () => {
  const receipt = { name: 'a.txt', path: 'attachments/c1/a.txt', size: 3, mime: 'text/plain' };

  it('history records carry their marks into the messages, and the conversation counts them once', () => {
    const user = recordToMessage({ cursor: 1, timestamp: '', role: 'user', content: 'hi', attachments: [receipt], untrusted_sources: [{ kind: 'channel_message', name: 'tg:1' }] });
    expect(user).toMatchObject({ untrusted_sources: [{ kind: 'attachment', name: 'attachments/c1/a.txt' }, { kind: 'channel_message', name: 'tg:1' }] });
    const summary = summaryToMessage({ cursor: 2, timestamp: '', role: 'summary', content: 'about a page', untrusted_sources: [{ kind: 'web_fetch', name: 'https://x.test/' }] });
    expect(summary).toMatchObject({ role: 'assistant', untrusted_sources: [{ kind: 'web_fetch', name: 'https://x.test/' }] });
    expect(summaryToMessage({ cursor: 2, timestamp: '', role: 'summary', content: 'owner only' })).not.toHaveProperty('untrusted_sources');
    const sources = untrustedSourcesOfMessages([summary!, user!, user!, { role: 'tool', tool_call_id: 'x', name: 'web_search', content: '' }]);
    expect(sources.map((source) => source.kind)).toEqual(['web_fetch', 'attachment', 'channel_message', 'web_search']);
  });
});
