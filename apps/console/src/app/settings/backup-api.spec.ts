import { describe, expect, it } from 'vitest';

import { backupFileName } from './backup-api';

describe('backupFileName', () => {
  it('takes the name the server gives the archive', () => {
    expect(backupFileName('attachment; filename="cashcode-backup-20261204-055320.zip"')).toBe('cashcode-backup-20261204-055320.zip');
  });

  it('falls back to a plain name for a missing or unexpected header', () => {
    expect(backupFileName(null)).toBe('cashcode-backup.zip');
    expect(backupFileName('attachment; filename="../../evil.sh"')).toBe('cashcode-backup.zip');
  });
});
