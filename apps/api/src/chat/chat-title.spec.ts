import { cleanModelTitle, fallbackTitle, MODEL_TITLE_MAX_CHARS } from './chat-title';

describe('chat titles', () => {
  it('Scenario: the fallback title is the first 40 characters of clean user text', () => {
    expect(fallbackTitle('  Plan   my\n\ttrip to the mountains of the north and the lakes ')).toBe(
      'Plan my trip to the mountains of the nor',
    );
    expect(fallbackTitle('CALL:[["list_dir",{"path":"."}]] what is in here?')).toBe('what is in here?');
    expect(fallbackTitle('[TOOL_CALLS: list_dir] show files')).toBe('show files');
    expect(fallbackTitle('Fix this:\n```ts\nconst x = 1;\n```\nplease')).toBe('Fix this: please');
    expect(fallbackTitle('@weather forecast for Paris')).toBe('forecast for Paris');
    expect(fallbackTitle('CALL:[["list_dir"')).toBe('');
    expect(Array.from(fallbackTitle('🚀'.repeat(50)))).toHaveLength(40);
  });

  it('Scenario: a model title is cleaned and bounded', () => {
    expect(cleanModelTitle('"Trip to Rome."')).toBe('Trip to Rome');
    expect(cleanModelTitle('<think>the user wants…</think>\n\nTitle: **Weekend plans**\nExtra line')).toBe('Weekend plans');
    expect(cleanModelTitle('标题：“罗马之旅”')).toBe('罗马之旅');
    expect(cleanModelTitle('   \n  ')).toBe('');
    expect(cleanModelTitle('CALL:[["list_dir"]]')).toBe('');
    expect(Array.from(cleanModelTitle('word '.repeat(40)))).toHaveLength(MODEL_TITLE_MAX_CHARS - 1);
  });
});
