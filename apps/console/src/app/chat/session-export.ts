import type { SessionExportFormat } from '@cashcode/contracts';

/**
 * The download of a chat export (openspec console "Requirement: Export a chat"): the file name matches the server's
 * `Content-Disposition` (`cashcode-<chat_id>.md|.json`, `:` written as `_`) and the type its body.
 */
export function sessionExportFileName(chatId: string, format: SessionExportFormat): string {
  return `cashcode-${chatId.replace(/:/g, '_')}.${format === 'json' ? 'json' : 'md'}`;
}

export function sessionExportMimeType(format: SessionExportFormat): string {
  return format === 'json' ? 'application/json' : 'text/markdown;charset=utf-8';
}
