import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from './private-fs';

export interface WriteFileAtomicOptions {
  /** File mode for the new file. Defaults to owner-only 0o600 (PRIVATE_FILE_MODE, see private-fs.ts). */
  mode?: number;
  /** Text encoding when `data` is a string. Defaults to utf8. */
  encoding?: BufferEncoding;
}

/** Temp file name used while writing: `.<name>.<pid>.<hex>.tmp` in the target's directory. */
export function tempPathFor(target: string): string {
  const dir = path.dirname(target);
  const base = path.basename(target);
  return path.join(dir, `.${base}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Replaces `target` atomically: write a temp file in the same directory, fsync it, rename it over the target,
 * then fsync the directory (best effort). Readers see either the old or the new content, never a torn file.
 * The temp file is removed when anything fails.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  const tmp = tempPathFor(target);
  let handle: fs.FileHandle | undefined;
  try {
    // created owner-only whatever `mode` is: the final mode is only set once the content is written
    handle = await fs.open(tmp, 'wx', PRIVATE_FILE_MODE);
    if (typeof data === 'string') {
      await handle.writeFile(data, { encoding: options.encoding ?? 'utf8' });
    } else {
      await handle.writeFile(data);
    }
    // The umask may have narrowed the mode on creation; make it exact (matters for 0600 secrets).
    await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(tmp, target);
  } catch (error) {
    if (handle) {
      await handle.close().catch(() => undefined);
    }
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(path.dirname(target));
}

/** JSON convenience: pretty-printed with a trailing newline. */
export async function writeJsonAtomic(target: string, value: unknown, options: WriteFileAtomicOptions = {}): Promise<void> {
  await writeFileAtomic(target, `${JSON.stringify(value, null, 2)}\n`, options);
}

/** fsync a directory so a rename inside it is durable. Best effort: some platforms/filesystems refuse. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported everywhere (e.g. Windows); the rename itself is still atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
