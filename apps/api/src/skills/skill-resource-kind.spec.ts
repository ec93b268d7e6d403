import { gzipSync } from 'node:zlib';
import { binaryMimeType, describeBinaryResource, isTextResource, RESOURCE_HEAD_CHARS, textHead, textResourceHead } from './skill-resource-kind';

describe('skill resource kinds', () => {
  it('Scenario: text resources are recognised by content; NUL bytes or invalid UTF-8 make a file binary', () => {
    expect(isTextResource(Buffer.from('# Guide\n认知 😀\n', 'utf8'))).toBe(true);
    expect(isTextResource(Buffer.alloc(0))).toBe(true);
    expect(isTextResource(Buffer.from([0x41, 0x00, 0x42]))).toBe(false);
    expect(isTextResource(Buffer.from([0x41, 0xff, 0xfe, 0x42]))).toBe(false);
    expect(isTextResource(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'))).toBe(false);
  });

  it('Scenario: a binary resource is described by MIME type, size and package path, never by its bytes', () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n', 'latin1'), Buffer.from([0x00, 0xe2, 0xe3, 0xcf, 0xd3])]);
    expect(binaryMimeType(pdf, 'assets/form.bin')).toBe('application/pdf');
    expect(binaryMimeType(Buffer.from([0x00, 0x01, 0x00, 0x00, 0x00, 0x10]), 'fonts/a.ttf')).toBe('font/ttf');
    expect(binaryMimeType(gzipSync(Buffer.from('x')), 'assets/data.tar.gz')).toBe('application/gzip');
    expect(binaryMimeType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]), 'x')).toBe('image/png');
    expect(binaryMimeType(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0]), 'templates/t.docx')).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(binaryMimeType(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0]), 'a.zip')).toBe('application/zip');
    expect(binaryMimeType(Buffer.from([0x00, 0x02]), 'fonts/b.woff2')).toBe('font/woff2');
    expect(binaryMimeType(Buffer.from([0x00, 0x02]), 'blob')).toBe('application/octet-stream');
    const text = describeBinaryResource(pdf, 'assets/form.pdf');
    expect(text).toBe(
      'Binary file: assets/form.pdf\nType: application/pdf\nSize: 14 bytes\n' +
        'Its content is not shown as text. Use it through the commands or scripts the Skill describes; its path is ' +
        '`assets/form.pdf` relative to the Skill package.',
    );
    expect(text).not.toContain('\u0000');
  });

  it('Scenario: a head cut inside a UTF-8 character is still text; a complete file is returned whole', () => {
    const euro = Buffer.from('ab€', 'utf8'); // € is 3 bytes
    expect(textHead(euro.subarray(0, 4), false)).toBe('ab');
    expect(textHead(euro.subarray(0, 4), true)).toBeNull();
    expect(textHead(Buffer.from([0x61, 0, 0x62]), false)).toBeNull();
    expect(textResourceHead('short', 'a.md', 5, true, '/skills/s')).toBe('short');
    const long = 'é'.repeat(RESOURCE_HEAD_CHARS + 10);
    const head = textResourceHead(long, 'a.md', Buffer.byteLength(long), true, '/skills/s');
    expect(head.startsWith('é'.repeat(RESOURCE_HEAD_CHARS) + '\n\n[Truncated: the first 200000 characters of a.md (')).toBe(true);
    expect(head).toContain(`tail -c +${RESOURCE_HEAD_CHARS * 2 + 1} /skills/s/a.md`);
    expect(describeBinaryResource(Buffer.from('%PDF-1.7'), 'f.pdf', '/skills/s', 9000)).toContain(
      'Size: 9000 bytes\nIts content is not shown as text. Use it through the commands or scripts the Skill describes; its ' +
        "path for exec is `/skills/s/f.pdf` (`f.pdf` relative to the Skill's base directory /skills/s).",
    );
  });
});
