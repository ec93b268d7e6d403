import { HtmlConversionTimeout, htmlToMarkdown } from './html-to-markdown';

describe('htmlToMarkdown on hostile pages', () => {
  it('Scenario: a page the converter cannot finish in time is stopped, not waited for', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await expect(htmlToMarkdown(`${'<div>'.repeat(100_000)}x`, 'https://example.com/', { timeoutMs: 300 })).rejects.toBeInstanceOf(
        HtmlConversionTimeout,
      );
    } finally {
      clearInterval(timer);
    }
    // the main thread ran timers while the worker was busy
    expect(ticks).toBeGreaterThan(0);
  });

  it('Scenario: hostile but convertible HTML keeps its text', async () => {
    const html = `<p>alpha${'&nbsp;'.repeat(2000)}beta</p><p>gamma${'<br>'.repeat(2000)}delta</p><b><i><a href="/x">eps`;
    const markdown = await htmlToMarkdown(html, 'https://example.com/');
    for (const word of ['alpha', 'beta', 'gamma', 'delta', 'eps']) expect(markdown).toContain(word);
    expect(markdown).not.toContain('\n\n\n');
    expect(markdown).not.toMatch(/[ \t]\n/);
    expect(markdown).not.toMatch(/(?<!\s)\s{3}/);
  });
});
