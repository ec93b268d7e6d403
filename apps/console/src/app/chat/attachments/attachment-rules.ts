/**
 * Pure helpers of the composer's attachments (openspec console "Requirement: Composer attachments"): the chip of one
 * file while it uploads and after, file sizes as people read them, and which files of a drop or paste are taken.
 */
import { isRecord, type AttachmentReceipt } from '@cashcode/contracts';

export type AttachmentStatus = 'uploading' | 'done' | 'error';

/** One file of the composer: uploading (with progress), uploaded (with the server's receipt) or failed. */
export interface AttachmentChip {
  key: number;
  name: string;
  size: number;
  status: AttachmentStatus;
  /** 0–1 while uploading */
  progress: number;
  /** the server's message when the upload failed */
  error?: string;
  receipt?: AttachmentReceipt;
}

/** `512 B`, `1.5 KB`, `12 MB` (1 KB = 1024 bytes) */
export function formatFileSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = value >= 10 ? Math.round(value).toString() : (Math.round(value * 10) / 10).toString();
  return `${text} ${units[unit]}`;
}

/** The files of a drop or paste (a pasted screenshot has no name: it is called `pasted-<n>.<ext>`). */
export function filesOf(list: FileList | readonly File[] | null | undefined, pastedName: (index: number, type: string) => string): File[] {
  if (!list) return [];
  const files: File[] = [];
  Array.from(list).forEach((file, index) => {
    files.push(file.name ? file : new File([file], pastedName(index, file.type), { type: file.type }));
  });
  return files;
}

/** `image/png` → `png`; anything unknown → `bin` */
export function extensionFor(type: string): string {
  const known: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp', 'text/plain': 'txt' };
  return known[type] ?? 'bin';
}

/** The receipts of the uploaded chips, in order; what the message frame refers to. */
export function uploadedReceipts(chips: readonly AttachmentChip[]): AttachmentReceipt[] {
  return chips.flatMap((chip) => (chip.status === 'done' && chip.receipt ? [chip.receipt] : []));
}

/** The well-formed attachment receipts of a loaded message (anything else is dropped). */
export function normalizeAttachments(value: unknown): AttachmentReceipt[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) => {
    if (!isRecord(entry)) return [];
    const { name, path, size, mime } = entry;
    if (typeof name !== 'string' || typeof path !== 'string' || typeof mime !== 'string' || typeof size !== 'number') return [];
    return [{ name, path, size, mime }];
  });
}

/** A receipt as a finished chip (the message list shows sent attachments with the same chips). */
export function chipOfReceipt(receipt: AttachmentReceipt, key: number): AttachmentChip {
  return { key, name: receipt.name, size: receipt.size, status: 'done', progress: 1, receipt };
}
