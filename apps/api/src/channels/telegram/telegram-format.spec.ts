import { parseTelegramHtml } from '../../../test/support/fake-telegram-server';
import { escapeHtml, plainTelegramMessages, renderTelegramMessages, splitPlain, TELEGRAM_MESSAGE_LIMIT } from './telegram-format';

describe('Telegram rendering', () => {
  it('renders the Markdown subset as Telegram HTML', () => {
    expect(renderTelegramMessages('# Title\n\nSome **bold**, _it_, ~~gone~~ and `a<b>`.\n\n- one\n- two\n\n> quoted')).toEqual([
      '<b>Title</b>\n\nSome <b>bold</b>, <i>it</i>, <s>gone</s> and <code>a&lt;b&gt;</code>.\n\n• one\n• two\n\n<blockquote>quoted</blockquote>',
    ]);
    expect(renderTelegramMessages('```js\nif (a < b && c) {}\n```')).toEqual(['<pre><code class="language-js">if (a &lt; b &amp;&amp; c) {}</code></pre>']);
  });

  it('keeps only http(s) and mailto links', () => {
    expect(renderTelegramMessages('[site](https://example.com/?a=1&b="2") [bad](javascript:alert(1))')).toEqual([
      '<a href="https://example.com/?a=1&amp;b=%222%22">site</a> bad',
    ]);
  });

  it('escapes raw HTML and stray symbols so Telegram can always parse the result', () => {
    const inputs = [
      '<script>alert(1)</script> & <b>not bold</b>',
      '*_`[]()~>#+-=|{}.!<&\\'.repeat(200),
      '**unclosed *nested _mix` of ~~markers',
      '<',
      '&amp; &lt; &#x41; &bogus;',
    ];
    for (const input of inputs) {
      for (const message of renderTelegramMessages(input)) {
        expect(parseTelegramHtml(message).error).toBeNull();
        expect(message.length).toBeLessThanOrEqual(TELEGRAM_MESSAGE_LIMIT);
      }
    }
  });

  it('splits a long text at line or word boundaries within the limit', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(' ');
    const messages = renderTelegramMessages(text);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(TELEGRAM_MESSAGE_LIMIT);
    expect(messages.map((message) => message.trim()).join(' ')).toBe(text);
  });

  it('splits a long code block into complete code blocks', () => {
    const code = Array.from({ length: 400 }, (_, i) => `x${i} = "<${i}>";`).join('\n');
    const messages = renderTelegramMessages(`\`\`\`py\n${code}\n\`\`\``);
    expect(messages.length).toBeGreaterThan(1);
    const parts = messages.map((message) => {
      expect(message).toMatch(/^<pre><code class="language-py">[^<]*<\/code><\/pre>$/);
      return parseTelegramHtml(message).text.replace(/\n$/, '');
    });
    expect(parts.join('\n')).toBe(code);
  });

  it('never cuts an escape sequence or a surrogate pair', () => {
    const pieces = splitPlain('&'.repeat(5000), 100);
    for (const piece of pieces) expect(piece).toMatch(/^(&amp;)+$/);
    const emoji = splitPlain('😀'.repeat(3000), 101);
    expect(emoji.join('')).toBe('😀'.repeat(3000));
    expect(escapeHtml('"<&>"')).toBe('&quot;&lt;&amp;&gt;&quot;');
  });

  it('plain messages keep the text as typed', () => {
    expect(plainTelegramMessages('a < b & *c*')).toEqual(['a < b & *c*']);
  });
});
