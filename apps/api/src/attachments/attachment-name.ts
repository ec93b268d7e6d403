/**
 * Attachment file names (openspec chat "Requirement: Attachments"): what a client calls a file is reduced to one safe
 * file name: the last path part only (`/` and `\` both separate), Unicode NFC, without control characters (C0, DEL,
 * C1), invisible direction overrides, leading dots or surrounding white space, and at most ATTACHMENT_NAME_MAX_BYTES
 * bytes of UTF-8 (cut between code points, the extension kept). Nothing left → null (the upload answers
 * `attachment_invalid_name`). Pure.
 */

/** the longest stored attachment name, in UTF-8 bytes (well under the usual 255-byte file name limit) */
export const ATTACHMENT_NAME_MAX_BYTES = 120;
/** an extension longer than this is treated as part of the name when a name is cut */
const MAX_EXTENSION_CHARS = 16;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/gu;
/** zero-width and bidirectional formatting characters that make a name look like another one */
const INVISIBLE_FORMATTING = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The longest prefix of `text` (whole code points) of at most `maxBytes` UTF-8 bytes. */
function cutToBytes(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const char of text) {
    const size = utf8Bytes(char);
    if (bytes + size > maxBytes) break;
    out += char;
    bytes += size;
  }
  return out;
}

/** `name` split into stem and extension (`.txt`); no extension for a name without a dot or with a long one. */
export function splitExtension(name: string): { stem: string; extension: string } {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || name.length - dot > MAX_EXTENSION_CHARS) return { stem: name, extension: '' };
  return { stem: name.slice(0, dot), extension: name.slice(dot) };
}

/** `stem` + `suffix` + `extension`, the stem cut so that the whole stays within ATTACHMENT_NAME_MAX_BYTES. */
function fit(stem: string, suffix: string, extension: string): string {
  const room = ATTACHMENT_NAME_MAX_BYTES - utf8Bytes(suffix) - utf8Bytes(extension);
  if (room <= 0) return cutToBytes(stem + suffix + extension, ATTACHMENT_NAME_MAX_BYTES);
  return cutToBytes(stem, room).trimEnd() + suffix + extension;
}

/** The safe file name for a client-given name, or null when nothing usable is left. */
export function sanitizeAttachmentName(raw: string): string | null {
  const lastPart = raw.split(/[\\/]/u).pop() ?? '';
  const cleaned = lastPart
    .replace(LONE_SURROGATE, '')
    .normalize('NFC')
    .replace(CONTROL_CHARS, '')
    .replace(INVISIBLE_FORMATTING, '')
    .trim()
    .replace(/^[.\s]+/u, '');
  if (cleaned === '') return null;
  if (utf8Bytes(cleaned) <= ATTACHMENT_NAME_MAX_BYTES) return cleaned;
  const { stem, extension } = splitExtension(cleaned);
  return fit(stem, '', extension);
}

/** The name for the `n`-th collision (n ≥ 1): `report.txt` → `report-1.txt`, still within the length cap. */
export function collisionName(name: string, n: number): string {
  const { stem, extension } = splitExtension(name);
  return fit(stem, `-${n}`, extension);
}
