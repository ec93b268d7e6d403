import { sessionExportFileName, sessionExportMimeType } from './session-export';

describe('session export download', () => {
  it('Scenario: export file names follow the server and are safe on every file system', () => {
    expect(sessionExportFileName('chat-1', 'markdown')).toBe('cashcode-chat-1.md');
    expect(sessionExportFileName('web:abc_1', 'json')).toBe('cashcode-web_abc_1.json');
    expect(sessionExportMimeType('markdown')).toBe('text/markdown;charset=utf-8');
    expect(sessionExportMimeType('json')).toBe('application/json');
  });
});
