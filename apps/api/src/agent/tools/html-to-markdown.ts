/**
 * HTML → readable Markdown for `web_fetch`, with a real HTML parser (turndown parses with domino in Node), never
 * regexes. Scripts, styles, navigation and form noise are dropped; links and images keep only http(s) targets,
 * resolved against the page URL.
 */
import type TurndownService from 'turndown';

type TurndownConstructor = typeof import('turndown');

/** turndown (and its DOM, domino) load on the first page converted: most runs never fetch a page. */
let turndown: TurndownConstructor | null = null;
function loadTurndown(): TurndownConstructor {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deliberate lazy loading, see above
  turndown ??= require('turndown') as TurndownConstructor;
  return turndown;
}

interface ElementLike {
  getAttribute(name: string): string | null;
}

const NOISE = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'nav',
  'footer',
  'form',
  'button',
  'select',
  'input',
  'textarea',
  'head',
  'meta',
  'link',
];

function absoluteHttpUrl(raw: string | null, base: string): string | null {
  if (raw === null || raw.trim() === '') return null;
  try {
    const url = new URL(raw.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

function createService(baseUrl: string): TurndownService {
  const service = new (loadTurndown())({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '*',
  });
  service.remove(NOISE as unknown as TurndownService.Filter);
  service.addRule('title', {
    filter: 'title' as unknown as TurndownService.Filter,
    replacement: (content) => (content.trim() === '' ? '' : `Title: ${content.trim()}\n\n`),
  });
  service.addRule('safeLinks', {
    filter: 'a' as unknown as TurndownService.Filter,
    replacement: (content, node) => {
      const href = absoluteHttpUrl((node as unknown as ElementLike).getAttribute('href'), baseUrl);
      const text = content.trim();
      if (text === '') return '';
      return href === null ? text : `[${text}](${href})`;
    },
  });
  service.addRule('safeImages', {
    filter: 'img' as unknown as TurndownService.Filter,
    replacement: (_content, node) => {
      const element = node as unknown as ElementLike;
      const alt = (element.getAttribute('alt') ?? '').trim();
      const src = absoluteHttpUrl(element.getAttribute('src'), baseUrl);
      if (alt === '') return '';
      return src === null ? `[image: ${alt}]` : `![${alt}](${src})`;
    },
  });
  return service;
}

/** Converts an HTML document or fragment to Markdown, whitespace tidied. */
export function htmlToMarkdown(html: string, baseUrl: string): string {
  const markdown = createService(baseUrl).turndown(html);
  return tidyText(markdown);
}

/** Trims line ends and collapses runs of 3+ newlines (spec §7). */
export function tidyText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
