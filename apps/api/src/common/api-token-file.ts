/**
 * The server's API token when CASHCODE_API_TOKEN is not set: a random token kept in `<config dir>/settings/api-token`
 * (owner-only 0600 in a 0700 directory), created on the first start and reused on every later one, so that REST, the
 * gateway, `/metrics` and `/v1` need a credential even on loopback (SECURITY.md, "Authentication").
 *
 * The file holds the token and a newline. What the start does with an existing file:
 * - readable or writable by group or others: its token may be known to another account, so a new token replaces it
 *   (the caller logs a warning; browsers signed in with the old token sign in again);
 * - a symbolic link, not a regular file, owned by another user, or content that is not a token (16–512 printable
 *   characters without spaces): the start stops with a message naming the file (delete it to get a new token).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { writeFileAtomic, fsyncDirectory } from './atomic-file';
import { mkdirPrivate, writeFilePrivate } from './private-fs';

/** Where the token lives, relative to the config directory. */
export const API_TOKEN_FILE = join('settings', 'api-token');

/** A token as the file may hold it (also what a user may write there by hand). */
const TOKEN_PATTERN = /^[\x21-\x7e]{16,512}$/;

/** Random bytes of a new token (256 bits, 43 base64url characters). */
const TOKEN_BYTES = 32;

/** The file cannot be used; the message says what to do. */
export class ApiTokenFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiTokenFileError';
  }
}

export interface ServerToken {
  token: string;
  /** `env`: CASHCODE_API_TOKEN; `file`: the token file */
  source: 'env' | 'file';
  /** the file (source `file`) */
  file?: string;
  /** the file was created by this start */
  created?: boolean;
  /** the file was readable by other accounts and got a new token */
  replaced?: boolean;
}

export function apiTokenPath(configDir: string): string {
  return join(configDir, API_TOKEN_FILE);
}

function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Creates the file with a new token unless it exists (another start may create it at the same moment). */
async function createTokenFile(file: string): Promise<boolean> {
  const token = newToken();
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFilePrivate(temp, `${token}\n`, 'wx');
  try {
    // link fails when the name exists: the first start's token wins, and nobody ever reads a half-written file
    await fs.link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await fs.rm(temp, { force: true });
  }
  await fsyncDirectory(dirname(file));
  return true;
}

/** Reads, checks and (when it was readable by others) replaces the token file; creates it when missing. */
export async function loadOrCreateApiToken(file: string): Promise<ServerToken> {
  await mkdirPrivate(dirname(file));
  let created = false;
  let stat = await fs.lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (stat === null) {
    created = await createTokenFile(file);
    stat = await fs.lstat(file);
  }
  if (!stat.isFile()) {
    throw new ApiTokenFileError(`${file} is not a regular file (a link or a directory?); remove it and start again`);
  }
  const posix = process.platform !== 'win32';
  const uid = process.getuid?.();
  if (posix && uid !== undefined && stat.uid !== uid) {
    throw new ApiTokenFileError(`${file} belongs to another user (uid ${stat.uid}); remove it and start again`);
  }
  if (posix && (stat.mode & 0o077) !== 0) {
    await writeFileAtomic(file, `${newToken()}\n`);
    return { ...(await readToken(file)), replaced: true };
  }
  return { ...(await readToken(file)), created };
}

async function readToken(file: string): Promise<ServerToken> {
  const handle = await fs.open(file, 'r');
  let text: string;
  try {
    // a token is at most 512 characters: read no more than that (and the newline) from whatever the file is
    const buffer = Buffer.alloc(1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    text = buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
  const token = text.replace(/\r?\n$/, '');
  if (!TOKEN_PATTERN.test(token)) {
    throw new ApiTokenFileError(
      `${file} does not hold an API token (one line of 16 to 512 printable characters without spaces); delete it and start again to create a new one`,
    );
  }
  return { token, source: 'file', file };
}

/**
 * The token this start uses: CASHCODE_API_TOKEN, else the token file's; null with CASHCODE_AUTH=off. Stores it in
 * `config.apiToken`, which every guard reads.
 */
export async function resolveServerToken(config: AppConfig): Promise<ServerToken | null> {
  if (!config.authEnabled) return null;
  if (config.apiToken !== null) return { token: config.apiToken, source: 'env' };
  const loaded = await loadOrCreateApiToken(apiTokenPath(config.configDir));
  config.apiToken = loaded.token;
  return loaded;
}
