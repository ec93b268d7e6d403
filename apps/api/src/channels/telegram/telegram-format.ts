/**
 * Markdown answers rendered for Telegram (openspec channels "Requirement: Safe rendering"): the model's Markdown is
 * parsed with marked's lexer and written as the small HTML subset Telegram accepts (`b`, `i`, `s`, `code`, `pre`,
 * `a`, `blockquote`); every piece of text is escaped, so a stray `*`, `<` or `&` can never make a send fail. Links keep
 * only http(s) and mailto targets. The rendering is cut into messages of at most TELEGRAM_MESSAGE_LIMIT characters at
 * block boundaries; a code block longer than one message is split into several complete `<pre>` blocks, and any other
 * block that alone is too long is sent as escaped plain text cut at whitespace.
 */
import { Lexer, type Token, type Tokens } from 'marked';

/** Telegram's limit of one message's text. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => (char === '&' ? '&amp;' : char === '<' ? '&lt;' : char === '>' ? '&gt;' : '&quot;'));
}

function safeHref(href: string): string | null {
  try {
    const url = new URL(href);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.toString() : null;
  } catch {
    return null;
  }
}

function inline(tokens: readonly Token[] | undefined): string {
  let out = '';
  for (const token of tokens ?? []) out += inlineToken(token);
  return out;
}

function inlineToken(token: Token): string {
  switch (token.type) {
    case 'strong':
      return `<b>${inline((token as Tokens.Strong).tokens)}</b>`;
    case 'em':
      return `<i>${inline((token as Tokens.Em).tokens)}</i>`;
    case 'del':
      return `<s>${inline((token as Tokens.Del).tokens)}</s>`;
    case 'codespan':
      return `<code>${escapeHtml((token as Tokens.Codespan).text)}</code>`;
    case 'br':
      return '\n';
    case 'link': {
      const link = token as Tokens.Link;
      const href = safeHref(link.href);
      const text = inline(link.tokens) || escapeHtml(link.href);
      return href ? `<a href="${escapeHtml(href)}">${text}</a>` : text;
    }
    case 'image':
      return escapeHtml((token as Tokens.Image).text || (token as Tokens.Image).href);
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens && text.tokens.length > 0 ? inline(text.tokens) : escapeHtml(text.text);
    }
    case 'escape':
      return escapeHtml((token as Tokens.Escape).text);
    default:
      return escapeHtml('raw' in token && typeof token.raw === 'string' ? token.raw : '');
  }
}

/** A rendered top-level block: its HTML, and its source text (used when the block alone is too long for a message). */
interface Block {
  html: string;
  raw: string;
  /** a fenced or indented code block: split into several `<pre>` blocks instead */
  code?: { text: string; lang: string };
}

function listHtml(list: Tokens.List): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, index) => {
      const bullet = list.ordered ? `${start + index}.` : '•';
      const check = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
      return `${bullet} ${check}${blocksHtml(item.tokens).trim()}`;
    })
    .join('\n');
}

function blocksHtml(tokens: readonly Token[]): string {
  return tokens.map((token) => blockOf(token).html).filter((html) => html !== '').join('\n\n');
}

function codeHtml(text: string, lang: string): string {
  const cls = /^[\w+#.-]{1,32}$/.test(lang) ? ` class="language-${lang}"` : '';
  return `<pre><code${cls}>${escapeHtml(text)}</code></pre>`;
}

function blockOf(token: Token): Block {
  const raw = 'raw' in token && typeof token.raw === 'string' ? token.raw : '';
  switch (token.type) {
    case 'space':
      return { html: '', raw };
    case 'code': {
      const code = token as Tokens.Code;
      const lang = (code.lang ?? '').trim().split(/\s/)[0] ?? '';
      return { html: codeHtml(code.text, lang), raw, code: { text: code.text, lang } };
    }
    case 'heading':
      return { html: `<b>${inline((token as Tokens.Heading).tokens)}</b>`, raw };
    case 'paragraph':
      return { html: inline((token as Tokens.Paragraph).tokens), raw };
    case 'blockquote':
      return { html: `<blockquote>${blocksHtml((token as Tokens.Blockquote).tokens)}</blockquote>`, raw };
    case 'list':
      return { html: listHtml(token as Tokens.List), raw };
    case 'hr':
      return { html: '———', raw };
    case 'table':
      return { html: `<pre>${escapeHtml(raw.trim())}</pre>`, raw };
    case 'text': {
      const text = token as Tokens.Text;
      return { html: text.tokens ? inline(text.tokens) : escapeHtml(text.text), raw };
    }
    default:
      return { html: escapeHtml(raw.trim()), raw };
  }
}

/** Cuts plain text into escaped pieces of at most `limit` characters, preferring a line break or a space. */
export function splitPlain(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest !== '') {
    // the largest prefix whose escaped form fits
    let end = 0;
    let size = 0;
    while (end < rest.length) {
      const char = rest[end] as string;
      const grow = escapeHtml(char).length;
      if (size + grow > limit) break;
      size += grow;
      end++;
    }
    if (end < rest.length) {
      const newline = rest.lastIndexOf('\n', end - 1);
      const cut = newline > end / 2 ? newline : rest.lastIndexOf(' ', end - 1);
      if (cut > end / 2) end = cut + 1;
      // never cut a surrogate pair
      const code = rest.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) end--;
    }
    const piece = rest.slice(0, end);
    if (piece.trim() !== '') pieces.push(escapeHtml(piece));
    rest = rest.slice(end);
  }
  return pieces;
}

/** A code block split into complete `<pre>` blocks that each fit, cutting between lines where it can. */
function splitCode(text: string, lang: string, limit: number): string[] {
  const overhead = codeHtml('', lang).length;
  return splitPlain(text, limit - overhead).map((piece) => codeHtml(unescapeHtml(piece), lang));
}

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot);/g, (_all, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : '"',
  );
}

/** The Markdown rendered as Telegram HTML messages, each at most `limit` characters; [] for blank text. */
export function renderTelegramMessages(markdown: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(markdown);
  } catch {
    tokens = [];
  }
  const pieces: string[] = [];
  for (const token of tokens) {
    const block = blockOf(token);
    if (block.html.trim() === '') continue;
    if (block.html.length <= limit) pieces.push(block.html);
    else if (block.code) pieces.push(...splitCode(block.code.text, block.code.lang, limit));
    else pieces.push(...splitPlain(block.raw.trim(), limit));
  }
  if (pieces.length === 0 && markdown.trim() !== '') pieces.push(...splitPlain(markdown.trim(), limit));
  const messages: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const joined = current === '' ? piece : `${current}\n\n${piece}`;
    if (joined.length <= limit) current = joined;
    else {
      messages.push(current);
      current = piece;
    }
  }
  if (current !== '') messages.push(current);
  return messages;
}

/** Plain-text messages of at most `limit` characters (no markup), for a send whose HTML Telegram refused. */
export function plainTelegramMessages(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  return splitPlain(text, limit).map(unescapeHtml);
}
