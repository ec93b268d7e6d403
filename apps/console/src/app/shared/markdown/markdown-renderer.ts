/**
 * Markdown → sanitised HTML for assistant messages: GFM (tables, fenced code) with marked, highlight.js for a
 * few common languages, then DOMPurify. Remote content never loads: images must be `data:image/…` or
 * same-origin (others are replaced by a "blocked" note), no inline styles, no media/embeds/forms/SVG.
 * Links open in a new tab with rel="noopener noreferrer".
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, Renderer, type Tokens } from 'marked';

hljs.registerLanguage('bash', bash);
hljs.registerLanguage('css', css);
hljs.registerLanguage('diff', diff);
hljs.registerLanguage('go', go);
hljs.registerLanguage('javascript', javascript);
hljs.registerLanguage('json', json);
hljs.registerLanguage('markdown', markdown);
hljs.registerLanguage('python', python);
hljs.registerLanguage('rust', rust);
hljs.registerLanguage('sql', sql);
hljs.registerLanguage('typescript', typescript);
hljs.registerLanguage('xml', xml);
hljs.registerLanguage('yaml', yaml);

export interface MarkdownLabels {
  copyCode: string;
  imageBlocked: string;
}

export interface MarkdownOptions {
  /** the console's own origin (same-origin images are allowed) */
  origin: string;
  labels: MarkdownLabels;
}

const FORBIDDEN_TAGS = [
  'style',
  'link',
  'meta',
  'base',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'video',
  'audio',
  'source',
  'track',
  'picture',
  'form',
  'input',
  'textarea',
  'select',
  'option',
  'svg',
  'math',
  'template',
];
const FORBIDDEN_ATTRIBUTES = ['style', 'srcset', 'poster', 'background', 'formaction', 'action', 'ping'];

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Only `data:image/…` URLs and URLs on the console's own origin may load as images. */
export function isAllowedImageSource(src: string, origin: string): boolean {
  const value = src.trim();
  if (value === '') return false;
  if (/^data:image\//i.test(value)) return true;
  try {
    return new URL(value, origin).origin === new URL(origin).origin;
  } catch {
    return false;
  }
}

function blockedImage(alt: string, labels: MarkdownLabels): string {
  const suffix = alt.trim() ? `: ${escapeHtml(alt.trim())}` : '';
  return `<span class="cc-image-blocked">${escapeHtml(labels.imageBlocked)}${suffix}</span>`;
}

function createMarked(options: MarkdownOptions): Marked {
  const marked = new Marked({ gfm: true, breaks: false, async: false });
  marked.use({
    renderer: {
      code({ text, lang }: Tokens.Code): string {
        const language = (lang ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
        const known = language !== '' && hljs.getLanguage(language) !== undefined;
        const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        const label = escapeHtml(language || 'text');
        const copy = escapeHtml(options.labels.copyCode);
        return (
          `<div class="cc-code"><div class="cc-code-bar"><span class="cc-code-lang">${label}</span>` +
          `<button type="button" class="cc-code-copy" data-copy-code aria-label="${copy}" title="${copy}">${copy}</button></div>` +
          `<pre><code class="hljs${known ? ` language-${escapeHtml(language)}` : ''}">${body}</code></pre></div>`
        );
      },
      image({ href, text, title }: Tokens.Image): string {
        if (!isAllowedImageSource(href, options.origin)) return blockedImage(text, options.labels);
        const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
        return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titleAttr} loading="lazy">`;
      },
      table(this: Renderer, token: Tokens.Table): string {
        // default rendering, wrapped so wide tables scroll instead of stretching the message
        return `<div class="cc-table">${Renderer.prototype.table.call(this, token)}</div>`;
      },
    },
  });
  return marked;
}

let purifierConfigured = false;
let currentOrigin = '';
let currentLabels: MarkdownLabels = { copyCode: 'Copy code', imageBlocked: 'Remote image blocked' };

function configurePurifier(): void {
  if (purifierConfigured) return;
  purifierConfigured = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A' && node.hasAttribute('href')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
    if (node.nodeName === 'IMG') {
      const src = node.getAttribute('src') ?? '';
      if (!isAllowedImageSource(src, currentOrigin)) {
        node.removeAttribute('src');
        node.setAttribute('data-blocked', '');
        node.setAttribute('alt', `${currentLabels.imageBlocked}${node.getAttribute('alt') ? `: ${node.getAttribute('alt')}` : ''}`);
      }
    }
  });
}

const markedCache = new Map<string, Marked>();

/** Renders Markdown to sanitised HTML. */
export function renderMarkdown(source: string, options: MarkdownOptions): string {
  configurePurifier();
  const key = `${options.origin}\u0000${options.labels.copyCode}\u0000${options.labels.imageBlocked}`;
  let marked = markedCache.get(key);
  if (!marked) {
    marked = createMarked(options);
    markedCache.set(key, marked);
  }
  const html = marked.parse(source, { async: false });
  currentOrigin = options.origin;
  currentLabels = options.labels;
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: FORBIDDEN_TAGS,
    FORBID_ATTR: FORBIDDEN_ATTRIBUTES,
    ADD_ATTR: ['target'],
  });
}
