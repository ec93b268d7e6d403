/**
 * Chat attachments on disk (openspec chat "Requirement: Attachments"): uploaded files live in the workspace at
 * `attachments/<chat_id>/<name>` so the file tools and `exec` can open them. Paths go through WorkspacePaths (the same
 * confinement as the file tools: no escape by `..` or a symbolic link). A file is written private (0600) to a hidden
 * temp file in the folder, fsynced, then hard-linked to its final name, which never replaces an existing file (a
 * collision takes the next `-n` suffix), so a stored file is always complete. A request is all or nothing: every file
 * is checked before anything is written, and the files of a request that fails half-way are removed again.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { AttachmentReceipt } from '@cashcode/contracts';
import { fsyncDirectory } from '../common/atomic-file';
import { mkdirPrivate, openPrivate } from '../common/private-fs';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { WorkspacePathError, WorkspacePaths } from '../agent/tools/workspace-paths';
import { attachmentMime, isImageMime, sniffImageMime } from './attachment-mime';
import { collisionName, sanitizeAttachmentName } from './attachment-name';
import { AttachmentError, formatBytes } from './attachments.errors';

/** the workspace folder holding every chat's attachments */
export const ATTACHMENTS_DIR = 'attachments';
/** an image attachment larger than this is not sent to the model as an image part (its path still is) */
export const ATTACHMENT_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
/** collision suffixes tried before giving up */
const MAX_COLLISION_SUFFIX = 1000;

/** A file of a multipart upload (multer's memory storage). */
export interface UploadedAttachmentFile {
  originalname: string;
  buffer: Buffer;
  size: number;
}

/** An attachment a message refers to, checked to be an uploaded file of its chat. */
export interface ResolvedAttachment extends AttachmentReceipt {
  /** the real absolute path (never shown) */
  absolute: string;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

@Injectable()
export class AttachmentsService {
  private readonly workspace: WorkspacePaths;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.workspace = new WorkspacePaths(config.workspaceDir, []);
  }

  /** The workspace-relative folder of a chat's attachments. */
  chatFolder(chatId: string): string {
    return `${ATTACHMENTS_DIR}/${chatId}`;
  }

  /** Stores the files of one upload request; all or nothing. */
  async store(chatId: string, files: readonly UploadedAttachmentFile[]): Promise<AttachmentReceipt[]> {
    const { attachmentMaxBytes, attachmentMaxRequestBytes, attachmentMaxFiles } = this.config;
    if (files.length === 0) {
      throw new AttachmentError('attachment_missing', 'no file was uploaded: send multipart/form-data with the files in the field `files`');
    }
    if (files.length > attachmentMaxFiles) throw this.tooMany();
    const names: string[] = [];
    let total = 0;
    for (const file of files) {
      const name = sanitizeAttachmentName(file.originalname);
      if (name === null) {
        throw new AttachmentError('attachment_invalid_name', 'a file name is empty or consists only of dots, path separators or control characters');
      }
      if (file.size === 0) throw new AttachmentError('attachment_empty', `${name} is empty`);
      if (file.size > attachmentMaxBytes) throw this.tooLarge(name);
      total += file.size;
      names.push(name);
    }
    if (total > attachmentMaxRequestBytes) {
      throw new AttachmentError(
        'attachments_too_large',
        `the files of one upload may be at most ${formatBytes(attachmentMaxRequestBytes)} together`,
        { limit: attachmentMaxRequestBytes },
      );
    }
    const folder = await this.resolveFolder(chatId);
    await mkdirPrivate(folder);
    const stored: AttachmentReceipt[] = [];
    const written: string[] = [];
    try {
      for (const [index, file] of files.entries()) {
        const name = await this.writeUnique(folder, names[index] as string, file.buffer);
        written.push(path.join(folder, name));
        stored.push({ name, path: `${this.chatFolder(chatId)}/${name}`, size: file.size, mime: attachmentMime(file.buffer) });
      }
      await fsyncDirectory(folder);
    } catch (error) {
      await Promise.all(written.map((file) => fs.rm(file, { force: true })));
      throw error;
    }
    return stored;
  }

  /** Removes one uploaded file of a chat (before its message is sent). */
  async remove(chatId: string, name: string): Promise<void> {
    const { absolute } = await this.checked(chatId, name);
    try {
      await fs.unlink(absolute);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') throw this.notFound(name);
      throw error;
    }
  }

  /**
   * The attachments a message refers to: each path must be `attachments/<chat_id>/<name>` of an uploaded regular file
   * of that chat (duplicates are dropped, the order kept). Else `attachment_not_found`.
   */
  async resolveForTurn(chatId: string, paths: readonly string[]): Promise<ResolvedAttachment[]> {
    const prefix = `${this.chatFolder(chatId)}/`;
    const out: ResolvedAttachment[] = [];
    for (const given of new Set(paths)) {
      if (!given.startsWith(prefix)) throw this.notFound(given, `${given} is not an attachment of this chat`);
      const { absolute, name } = await this.checked(chatId, given.slice(prefix.length), given);
      const info = await this.describe(absolute, name, given);
      out.push({ ...info, absolute });
    }
    return out;
  }

  /**
   * The image attachments as base64 for the model: PNG, JPEG, GIF or WebP by their bytes, at most
   * ATTACHMENT_IMAGE_MAX_BYTES each; other files are left out (the model still gets their paths).
   */
  async images(attachments: readonly ResolvedAttachment[]): Promise<Array<{ mimeType: string; data: string }>> {
    const out: Array<{ mimeType: string; data: string }> = [];
    for (const attachment of attachments) {
      if (!isImageMime(attachment.mime) || attachment.size > ATTACHMENT_IMAGE_MAX_BYTES) continue;
      const bytes = await fs.readFile(attachment.absolute);
      const mimeType = bytes.length <= ATTACHMENT_IMAGE_MAX_BYTES ? sniffImageMime(bytes) : null;
      if (mimeType) out.push({ mimeType, data: bytes.toString('base64') });
    }
    return out;
  }

  private async describe(absolute: string, name: string, display: string): Promise<AttachmentReceipt> {
    let stat;
    try {
      stat = await fs.lstat(absolute);
    } catch {
      throw this.notFound(display);
    }
    if (!stat.isFile()) throw this.notFound(display);
    const handle = await fs.open(absolute, 'r');
    let head: Buffer;
    try {
      const buffer = Buffer.alloc(Math.min(stat.size, 64 * 1024));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
    return { name, path: display, size: stat.size, mime: attachmentMime(head) };
  }

  /** The absolute path of a chat's file `name`, which must already be a sanitised name. */
  private async checked(chatId: string, name: string, display = name): Promise<{ absolute: string; name: string }> {
    if (name === '' || sanitizeAttachmentName(name) !== name) throw this.notFound(display);
    const folder = await this.resolveFolder(chatId);
    return { absolute: path.join(folder, name), name };
  }

  private async resolveFolder(chatId: string): Promise<string> {
    try {
      return (await this.workspace.resolve(this.chatFolder(chatId))).absolute;
    } catch (error) {
      if (error instanceof WorkspacePathError) throw this.notFound(this.chatFolder(chatId), error.message);
      throw error;
    }
  }

  /** Writes `data` under `name` (or the first free `-n` variant); returns the name used. */
  private async writeUnique(folder: string, name: string, data: Buffer): Promise<string> {
    const temp = path.join(folder, `.upload-${randomBytes(8).toString('hex')}`);
    const handle = await openPrivate(temp, 'wx');
    try {
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      for (let n = 0; n <= MAX_COLLISION_SUFFIX; n++) {
        const candidate = n === 0 ? name : collisionName(name, n);
        try {
          await fs.link(temp, path.join(folder, candidate));
          return candidate;
        } catch (error) {
          if (errorCode(error) !== 'EEXIST') throw error;
        }
      }
      throw new AttachmentError('attachment_invalid_name', `too many files named like ${name} in this chat`);
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  private tooLarge(name: string): AttachmentError {
    const limit = this.config.attachmentMaxBytes;
    return new AttachmentError('attachment_too_large', `${name} is larger than ${formatBytes(limit)}, the limit for one file`, { limit });
  }

  tooMany(): AttachmentError {
    const limit = this.config.attachmentMaxFiles;
    return new AttachmentError('attachment_too_many', `at most ${limit} files can be uploaded at once`, { limit });
  }

  tooLargeUnnamed(): AttachmentError {
    const limit = this.config.attachmentMaxBytes;
    return new AttachmentError('attachment_too_large', `a file is larger than ${formatBytes(limit)}, the limit for one file`, { limit });
  }

  private notFound(display: string, detail?: string): AttachmentError {
    return new AttachmentError('attachment_not_found', detail ?? `no uploaded file ${display} in this chat`);
  }
}
