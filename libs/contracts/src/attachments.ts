/**
 * Chat attachments (openspec chat "Requirement: Attachments"): files uploaded with
 * `POST /api/sessions/{chat_id}/attachments` into `<workspace>/attachments/<chat_id>/` and referenced by a message frame's
 * additive `attachments` field (their workspace-relative paths).
 */

/** One stored attachment, as the upload answers it and as a user message keeps it (history and projection). */
export interface AttachmentReceipt {
  /** the sanitised file name (no path parts, no control characters, no leading dots; a collision gets `-1`, `-2`, …) */
  name: string;
  /** workspace-relative path, `attachments/<chat_id>/<name>`: what the message frame sends and the tools open */
  path: string;
  /** bytes */
  size: number;
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp` from the file's magic bytes; else `text/plain` or `application/octet-stream` */
  mime: string;
}

/** `POST /api/sessions/{chat_id}/attachments` (201) */
export interface AttachmentUploadResponse {
  attachments: AttachmentReceipt[];
}

/** the most attachment paths one message frame may carry */
export const MAX_MESSAGE_ATTACHMENTS = 20;
/** the longest attachment path a message frame may carry */
export const MAX_ATTACHMENT_PATH_CHARS = 512;
