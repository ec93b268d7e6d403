/**
 * How a user message tells the model about its attachments: one line appended to the text the model gets (never to
 * the text persisted or shown), with the workspace-relative paths the file tools (read_file, exec, …) open. Pure.
 */
import type { AttachmentReceipt } from '@cashcode/contracts';

/** `\n\n[Attached files (paths relative to the workspace): attachments/c/a.txt (text/plain, 12 bytes)]` */
export function attachmentsReferenceLine(attachments: readonly AttachmentReceipt[]): string {
  if (attachments.length === 0) return '';
  const list = attachments.map((a) => `${a.path} (${a.mime}, ${a.size} bytes)`).join('; ');
  return `\n\n[Attached files (paths relative to the workspace): ${list}]`;
}

/** The model's text of a user message: its content followed by the attachments line. */
export function withAttachmentsReference(content: string, attachments: readonly AttachmentReceipt[] | undefined): string {
  return attachments && attachments.length > 0 ? content + attachmentsReferenceLine(attachments) : content;
}
