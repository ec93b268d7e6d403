/**
 * `read_file` (openspec builtin-tools): a text file of the workspace, 500 lines by default, with `offset`/`limit`
 * paging.
 */
import { closeSync, constants, fstatSync, openSync, promises as fs, readSync, statSync } from 'node:fs';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { optionalInteger, requireString, toolError } from './tool-args';
import { describeFsError, WorkspacePathError, type WorkspacePaths } from './workspace-paths';

export const READ_FILE_DEFAULT_LINES = 500;
export const READ_FILE_MAX_LINES = 2000;
/** at most this many bytes of one file are read */
export const READ_FILE_MAX_BYTES = 10 * 1024 * 1024;
/**
 * Files up to this size are read with synchronous calls: from the page cache that takes microseconds, less than one
 * thread-pool round trip (an asynchronous read costs four: open, fstat, read, close). Larger files are read
 * asynchronously so that they never hold up the other chats.
 */
export const READ_FILE_SYNC_MAX_BYTES = 64 * 1024;
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** Splits text into lines the way Python's splitlines does for \n, \r\n and \r (no trailing empty line). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export class ReadFileTool implements AgentTool {
  readonly name = 'read_file';
  readonly description =
    'Read a UTF-8 text file in the workspace. Returns at most 500 lines by default; ' +
    'use offset (first line, 1-based) and limit (number of lines) to read other parts of a long file.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path relative to the workspace' },
      offset: { type: 'integer', minimum: 1, description: 'First line to return, 1-based (default 1)' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: READ_FILE_MAX_LINES,
        description: `Maximum number of lines to return (default ${READ_FILE_DEFAULT_LINES})`,
      },
    },
    required: ['path'],
  };
  readonly readOnly = true;

  constructor(private readonly workspace: WorkspacePaths) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const userPath = requireString(args, 'path');
    const offset = optionalInteger(args, 'offset', 1, 1, Number.MAX_SAFE_INTEGER);
    const limit = optionalInteger(args, 'limit', READ_FILE_DEFAULT_LINES, 1, READ_FILE_MAX_LINES);
    try {
      const target = await this.workspace.resolve(userPath);
      let stat;
      try {
        stat = statSync(target.absolute);
      } catch {
        return toolError(`file not found: ${target.display}`);
      }
      if (!stat.isFile()) return toolError(`${target.display} is not a file`);
      ctx.signal.throwIfAborted();
      const { text, partial } =
        stat.size <= READ_FILE_SYNC_MAX_BYTES
          ? readSmallFile(target.absolute, target.display)
          : await readPrefix(target.absolute, target.display);
      const lines = splitLines(text);
      const total = lines.length;
      const totalText = partial ? `at least ${total}` : `${total}`;
      const partialNote = partial ? ` Only the first ${READ_FILE_MAX_BYTES / (1024 * 1024)} MiB of the file were read.` : '';
      if (total === 0) return partial ? `(no complete line in the first part of ${target.display})` : '(empty file)';
      if (offset > total) return toolError(`offset ${offset} is past the end of ${target.display} (${totalText} lines)`);
      if (offset === 1 && total <= limit && !partial) return text;
      const end = Math.min(total, offset - 1 + limit);
      const body = lines.slice(offset - 1, end).join('\n');
      if (end < total || offset > 1 || partial) {
        const more = end < total ? ` Call read_file with offset=${end + 1} to continue.` : '';
        return `${body}\n\n[Content truncated: ${totalText} lines in total; showing lines ${offset}-${end}.${more}${partialNote}]`;
      }
      return body;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}

/** Decodes the bytes read; a file longer than READ_FILE_MAX_BYTES loses its last, probably cut, line. */
function decodePrefix(bytes: Buffer, size: number): { text: string; partial: boolean } {
  let text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const partial = size > READ_FILE_MAX_BYTES;
  if (partial) {
    const cut = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    text = cut >= 0 ? text.slice(0, cut + 1) : '';
  }
  return { text, partial };
}

/** A small file, read synchronously (see READ_FILE_SYNC_MAX_BYTES); it may have grown since the stat. */
function readSmallFile(absolute: string, display: string): { text: string; partial: boolean } {
  let fd: number;
  try {
    fd = openSync(absolute, OPEN_FLAGS);
  } catch (error) {
    throw new WorkspacePathError(describeFsError(error, display));
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, READ_FILE_MAX_BYTES);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const bytesRead = readSync(fd, buffer, read, length - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return decodePrefix(buffer.subarray(0, read), size);
  } finally {
    closeSync(fd);
  }
}

async function readPrefix(absolute: string, display: string): Promise<{ text: string; partial: boolean }> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(absolute, OPEN_FLAGS);
  } catch (error) {
    throw new WorkspacePathError(describeFsError(error, display));
  }
  try {
    const size = (await handle.stat()).size;
    const length = Math.min(size, READ_FILE_MAX_BYTES);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return decodePrefix(buffer.subarray(0, read), size);
  } finally {
    await handle.close();
  }
}
