import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { withUserImages } from './wire-messages';

describe('withUserImages', () => {
  it('turns the last user message into a text part followed by one image_url part per image', () => {
    const wire: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: 'answer' },
      { role: 'user', content: 'look' },
    ];
    withUserImages(wire, [
      { mimeType: 'image/png', data: 'AAAA' },
      { mimeType: 'image/jpeg', data: 'BBBB' },
    ]);
    expect(wire[1]).toEqual({ role: 'user', content: 'earlier' });
    expect(wire[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BBBB' } },
      ],
    });
  });

  it('changes nothing without images', () => {
    const wire: ChatCompletionMessageParam[] = [{ role: 'user', content: 'look' }];
    withUserImages(wire, []);
    expect(wire).toEqual([{ role: 'user', content: 'look' }]);
  });
});
