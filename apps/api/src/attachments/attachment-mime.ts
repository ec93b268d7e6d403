/**
 * The media type of an attachment from its bytes, never from its name: the four image formats a model may take as
 * input are recognised by their magic bytes (PNG, JPEG, GIF, WebP); other content is `text/plain` when it is valid
 * UTF-8 without NUL bytes, else `application/octet-stream`. Pure.
 */

export const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The image type the bytes start with, or null. */
export function sniffImageMime(bytes: Uint8Array): ImageMimeType | null {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (data.length >= 8 && data.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && (data.toString('latin1', 0, 6) === 'GIF87a' || data.toString('latin1', 0, 6) === 'GIF89a')) {
    return 'image/gif';
  }
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return null;
}

export function isImageMime(mime: string): mime is ImageMimeType {
  return (IMAGE_MIME_TYPES as readonly string[]).includes(mime);
}

/** The media type of an attachment's content. */
export function attachmentMime(bytes: Uint8Array): string {
  const image = sniffImageMime(bytes);
  if (image) return image;
  if (bytes.includes(0)) return 'application/octet-stream';
  try {
    utf8.decode(bytes);
    return 'text/plain';
  } catch {
    return 'application/octet-stream';
  }
}
