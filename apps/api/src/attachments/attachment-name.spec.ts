import { attachmentMime, sniffImageMime } from './attachment-mime';
import { ATTACHMENT_NAME_MAX_BYTES, collisionName, sanitizeAttachmentName } from './attachment-name';

describe('sanitizeAttachmentName', () => {
  it('keeps the last path part and removes control characters, direction overrides and leading dots', () => {
    expect(sanitizeAttachmentName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeAttachmentName('C:\\Users\\me\\notes.txt')).toBe('notes.txt');
    expect(sanitizeAttachmentName('a\u0000b\u001f\u007f\u0085.txt')).toBe('ab.txt');
    expect(sanitizeAttachmentName('evil\u202etxt.exe')).toBe('eviltxt.exe');
    expect(sanitizeAttachmentName('  ..hidden  ')).toBe('hidden');
    expect(sanitizeAttachmentName('cafe\u0301.md')).toBe('café.md');
  });

  it('answers null when nothing usable is left', () => {
    for (const name of ['', '.', '..', '...', 'a/', 'x/..', ' \u0001 ', '\u200b']) expect(sanitizeAttachmentName(name)).toBeNull();
  });

  it('cuts long names between code points, keeping the extension', () => {
    const name = sanitizeAttachmentName(`${'😀'.repeat(100)}.jpeg`) as string;
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(ATTACHMENT_NAME_MAX_BYTES);
    expect(name).toBe(`${'😀'.repeat(28)}.jpeg`);
    expect(sanitizeAttachmentName('x'.repeat(300))).toBe('x'.repeat(ATTACHMENT_NAME_MAX_BYTES));
  });

  it('numbers collisions before the extension, within the cap', () => {
    expect(collisionName('report.txt', 1)).toBe('report-1.txt');
    expect(collisionName('archive', 12)).toBe('archive-12');
    const long = collisionName(`${'a'.repeat(116)}.txt`, 3);
    expect(long).toBe(`${'a'.repeat(114)}-3.txt`);
  });
});

describe('attachmentMime', () => {
  it('recognises the image formats by their magic bytes only', () => {
    expect(sniffImageMime(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe('image/png');
    expect(sniffImageMime(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageMime(Buffer.from('GIF89a...'))).toBe('image/gif');
    expect(sniffImageMime(Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageMime(Buffer.from('PNG but not really'))).toBeNull();
  });

  it('tells UTF-8 text from binary data', () => {
    expect(attachmentMime(Buffer.from('héllo\n'))).toBe('text/plain');
    expect(attachmentMime(Buffer.from([0x61, 0x00, 0x62]))).toBe('application/octet-stream');
    expect(attachmentMime(Buffer.from([0xc3, 0x28]))).toBe('application/octet-stream');
  });
});
