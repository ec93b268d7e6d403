/**
 * Tells a Skill's text resources from its binary ones (PDF, fonts, archives, images …) so `skill_read_resource`
 * never hands the model decoded bytes: a file is text when it has no NUL byte and is valid UTF-8; otherwise the tool
 * answers with the file's MIME type (from its magic bytes, else its extension) and size.
 */

const MAGIC: ReadonlyArray<{ bytes: number[]; mime: string }> = [
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], mime: 'application/pdf' },
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], mime: 'image/png' },
  { bytes: [0xff, 0xd8, 0xff], mime: 'image/jpeg' },
  { bytes: [0x47, 0x49, 0x46, 0x38], mime: 'image/gif' },
  { bytes: [0x1f, 0x8b], mime: 'application/gzip' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], mime: 'application/zip' },
  { bytes: [0x00, 0x01, 0x00, 0x00, 0x00], mime: 'font/ttf' },
  { bytes: [0x4f, 0x54, 0x54, 0x4f], mime: 'font/otf' },
  { bytes: [0x77, 0x4f, 0x46, 0x46], mime: 'font/woff' },
  { bytes: [0x77, 0x4f, 0x46, 0x32], mime: 'font/woff2' },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], mime: 'application/x-executable' },
];

const BY_EXTENSION: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  zip: 'application/zip',
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff: 'font/woff',
  woff2: 'font/woff2',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** True when `data` is text the model can read: no NUL byte and valid UTF-8. */
export function isTextResource(data: Buffer): boolean {
  if (data.includes(0)) return false;
  try {
    UTF8.decode(data);
    return true;
  } catch {
    return false;
  }
}

/** The MIME type of a binary resource: magic bytes first, then the extension, else `application/octet-stream`. */
export function binaryMimeType(data: Buffer, rel: string): string {
  for (const { bytes, mime } of MAGIC) {
    if (data.length >= bytes.length && bytes.every((b, i) => data[i] === b)) {
      if (mime === 'application/zip') {
        const ext = rel.toLowerCase().split('.').pop() ?? '';
        return BY_EXTENSION[ext]?.startsWith('application/vnd.') ? BY_EXTENSION[ext] : mime;
      }
      return mime;
    }
  }
  const base = rel.split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  return BY_EXTENSION[ext] ?? 'application/octet-stream';
}

/**
 * What `skill_read_resource` tells the model about a binary file instead of its bytes; `baseDir` is where exec sees
 * the Skill (`/skills/<name>`), `size` the file's total size when `data` is only its head.
 */
export function describeBinaryResource(data: Buffer, rel: string, baseDir?: string | null, size = data.length): string {
  const mime = binaryMimeType(data, rel);
  const where =
    baseDir != null
      ? `its path for exec is \`${baseDir}/${rel}\` (\`${rel}\` relative to the Skill's base directory ${baseDir}).`
      : `its path is \`${rel}\` relative to the Skill package.`;
  return (
    `Binary file: ${rel}\nType: ${mime}\nSize: ${size} bytes\n` +
    `Its content is not shown as text. Use it through the commands or scripts the Skill describes; ${where}`
  );
}

/** The bytes read of a resource at most: enough for RESOURCE_HEAD_CHARS characters of any UTF-8. */
export const RESOURCE_HEAD_READ_BYTES = 800_000;

/**
 * The text of a resource's head, or null when it is binary. A head cut inside a UTF-8 sequence loses that partial
 * character (at most 3 bytes) before it is checked.
 */
export function textHead(data: Buffer, complete: boolean): string | null {
  if (isTextResource(data)) return data.toString('utf8');
  if (complete || data.includes(0)) return null;
  for (let cut = 1; cut <= 3 && cut < data.length; cut++) {
    const shorter = data.subarray(0, data.length - cut);
    if (isTextResource(shorter)) return shorter.toString('utf8');
  }
  return null;
}

/** The characters of a text resource `skill_read_resource` returns at most; the rest is read with exec. */
export const RESOURCE_HEAD_CHARS = 200_000;

/**
 * A text resource for the model: whole, or its first RESOURCE_HEAD_CHARS characters with a note of the total size and
 * how to read the rest with exec at the Skill's base directory.
 */
export function textResourceHead(text: string, rel: string, size: number, complete: boolean, baseDir?: string | null): string {
  const chars = Array.from(text);
  if (complete && chars.length <= RESOURCE_HEAD_CHARS) return text;
  const head = chars.slice(0, RESOURCE_HEAD_CHARS).join('');
  const file = baseDir != null ? `${baseDir}/${rel}` : rel;
  const lines = head.split('\n').length;
  return (
    `${head}\n\n[Truncated: the first ${Array.from(head).length} characters of ${rel} (${size} bytes in total) are shown. ` +
    `Read the rest with exec, e.g. \`sed -n '${lines},${lines + 500}p' ${file}\` or \`tail -c +${Buffer.byteLength(head) + 1} ${file} | head -c 100000\`.]`
  );
}
