import { looksExecutable, safeDownloadName } from './browser-downloads';

describe('browser downloads', () => {
  it('Scenario: programs are recognised by their bytes and by their names', () => {
    expect(looksExecutable(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), 'data.bin')).toBe(true);
    expect(looksExecutable(Buffer.from('MZ\x90\x00'), 'setup')).toBe(true);
    expect(looksExecutable(Buffer.from('#!/bin/sh\n'), 'notes')).toBe(true);
    expect(looksExecutable(Buffer.from([0xcf, 0xfa, 0xed, 0xfe]), 'x')).toBe(true);
    expect(looksExecutable(Buffer.from('hello'), 'install.EXE')).toBe(true);
    expect(looksExecutable(Buffer.from('%PDF-1.7'), 'paper.pdf')).toBe(false);
  });

  it('names are reduced to a safe last path part', () => {
    expect(safeDownloadName('../../etc/passwd')).toBe('passwd');
    expect(safeDownloadName('..\\..\\x.txt')).toBe('x.txt');
    expect(safeDownloadName('.hidden')).toBe('hidden');
    expect(safeDownloadName('a\u202eb\u0000c.txt')).toBe('abc.txt');
    expect(safeDownloadName('')).toBe('download');
    expect(Buffer.byteLength(safeDownloadName('é'.repeat(200)))).toBeLessThanOrEqual(120);
  });
});
