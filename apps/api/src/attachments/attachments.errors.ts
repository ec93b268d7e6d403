import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export type AttachmentErrorCode =
  /** the multipart body cannot be parsed (malformed part header, missing boundary, …) */
  | 'multipart_invalid'
  /** the upload carried no file (or was not multipart/form-data) */
  | 'attachment_missing'
  /** a file was sent in a multipart field other than `files` */
  | 'attachment_field_invalid'
  | 'attachment_empty'
  /** nothing is left of the file name once it is sanitised */
  | 'attachment_invalid_name'
  /** one file is over CASHCODE_ATTACHMENT_MAX_BYTES */
  | 'attachment_too_large'
  /** the files of one request are over CASHCODE_ATTACHMENT_MAX_REQUEST_BYTES together */
  | 'attachments_too_large'
  /** more files than CASHCODE_ATTACHMENT_MAX_FILES in one request */
  | 'attachment_too_many'
  /** DELETE of a file that is not there, or a message referring to a path that is not an uploaded file of its chat */
  | 'attachment_not_found';

const STATUS: Record<AttachmentErrorCode, number> = {
  multipart_invalid: HttpStatus.BAD_REQUEST,
  attachment_missing: HttpStatus.UNPROCESSABLE_ENTITY,
  attachment_field_invalid: HttpStatus.UNPROCESSABLE_ENTITY,
  attachment_empty: HttpStatus.UNPROCESSABLE_ENTITY,
  attachment_invalid_name: HttpStatus.UNPROCESSABLE_ENTITY,
  attachment_too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  attachments_too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  attachment_too_many: HttpStatus.UNPROCESSABLE_ENTITY,
  attachment_not_found: HttpStatus.NOT_FOUND,
};

/** Coded error of the attachments module, rendered as problem+json (`limit` in bytes or files for the limit codes). */
export class AttachmentError extends DomainError<AttachmentErrorCode> {
  constructor(code: AttachmentErrorCode, message: string, extensions?: Record<string, unknown>) {
    super(code, message, { status: STATUS[code], ...(extensions ? { extensions } : {}) });
  }
}

/** `10 MiB`, `512 KiB`, `300 bytes` */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
