/**
 * Downloads of a browser page (openspec browser "Requirement: Downloads"): saved only into the workspace, at
 * `downloads/<name>` (the name reduced to a safe last path part, never replacing a file, mode 0600 — never
 * executable); a program (ELF, PE, Mach-O, a script with `#!`, or a name with an executable extension) is refused and
 * deleted.
 */
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { Download } from 'playwright-core';
import type { WorkspacePaths } from '../tools/workspace-paths';
import { formatBytes } from '../tools/tool-args';

export const DOWNLOADS_FOLDER = 'downloads';

const EXECUTABLE_EXTENSIONS = new Set([
  'exe', 'msi', 'bat', 'cmd', 'com', 'scr', 'ps1', 'vbs', 'js', 'jse', 'wsf', 'hta', 'cpl', 'jar', 'sh', 'bash', 'zsh',
  'run', 'bin', 'elf', 'appimage', 'deb', 'rpm', 'apk', 'dmg', 'pkg', 'app', 'command', 'desktop', 'so', 'dll', 'dylib',
]);

/** The magic numbers of programs: ELF, PE (MZ), Mach-O (both byte orders, fat binaries), scripts. */
export function looksExecutable(head: Buffer, name: string): boolean {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  if (EXECUTABLE_EXTENSIONS.has(ext)) return true;
  if (head.length >= 2 && head[0] === 0x23 && head[1] === 0x21) return true; // #!
  if (head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a) return true; // MZ
  if (head.length >= 4) {
    const magic = head.readUInt32BE(0);
    if (magic === 0x7f454c46) return true; // \x7fELF
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic)) return true;
  }
  return false;
}

/** The suggested name as a safe file name: its last path part, no control or direction characters, no leading dots. */
export function safeDownloadName(suggested: string): string {
  const base = suggested.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  let name = base.replace(/[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, '').replace(/^[.\s]+/, '').trim();
  while (Buffer.byteLength(name) > 120) name = Array.from(name).slice(0, -1).join('');
  return name === '' ? 'download' : name;
}

/** Fetches a download the browser could not make itself (a `download` link bypasses the page's route). */
export type DownloadRefetch = (url: string) => Promise<Buffer>;

async function contentOf(download: Download, refetch: DownloadRefetch): Promise<Buffer> {
  const failure = await download.failure();
  if (failure === null) return readFile(await download.path());
  // Chromium has no network of its own: such a download is fetched by the server, through the same address rules
  return refetch(download.url());
}

/** Saves a finished download into the workspace; returns the line the tool reports (a refusal starts with "refused"). */
export async function saveDownload(download: Download, workspace: WorkspacePaths, maxBytes: number, refetch: DownloadRefetch): Promise<string> {
  const name = safeDownloadName(download.suggestedFilename());
  try {
    const content = await contentOf(download, refetch);
    if (content.length > maxBytes) return `refused download ${name}: larger than ${formatBytes(maxBytes)}`;
    if (looksExecutable(content.subarray(0, 8), name)) {
      return `refused download ${name}: it is an executable program; programs are not saved`;
    }
    const folder = await workspace.resolve(DOWNLOADS_FOLDER);
    await mkdir(folder.absolute, { recursive: true, mode: 0o700 });
    const stat = await lstat(folder.absolute);
    if (!stat.isDirectory()) return `refused download ${name}: ${DOWNLOADS_FOLDER} in the workspace is not a folder`;
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 0; n < 100; n += 1) {
      const candidate = n === 0 ? name : `${stem} (${n})${ext}`;
      try {
        // `wx`: never replaces a file (or follows a link planted there); 0600: never executable
        await writeFile(path.join(folder.absolute, candidate), content, { flag: 'wx', mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      return `downloaded ${DOWNLOADS_FOLDER}/${candidate} (${formatBytes(content.length)}) into the workspace`;
    }
    return `refused download ${name}: too many files with that name in ${DOWNLOADS_FOLDER}`;
  } catch (error) {
    return `download of ${name} failed: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await download.delete().catch(() => undefined);
  }
}
