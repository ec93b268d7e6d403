/**
 * Reading a Skill ZIP: yauzl is loaded on first use and reads the central directory with lazy entries and raw names.
 * The archive must be 4 bytes..10 MiB, start with `PK`, parse and hold 1..4,096 entries (a repository download
 * lists many Skills); its members are then checked (`skill-archive-members.ts`) before anything is read from them.
 * `inspectSkillArchive` lists the packages with their frontmatter name for the import's selection.
 */
import type { Entry, ZipFile } from 'yauzl';
import type { SkillArchiveCandidate } from '@cashcode/contracts';
import { SKILL_FILE, SKILL_MD_MAX_BYTES, SKILL_MD_MESSAGES, parseSkillMarkdown } from '@cashcode/skill-format';
import { SkillError } from './skills.errors';
import { checkMembers, type Member } from './skill-archive-members';
import { ARCHIVE_MESSAGES, ZIP_MAX_ARCHIVE_ENTRIES, ZIP_MAX_BYTES, rejectArchive } from './skill-archive-rules';

/** packages listed in the "several Skills" answer */
const CANDIDATES_MAX = 64;

/** A checked archive: its members and the packages (folders holding a SKILL.md) found in it. */
export interface InspectedArchive {
  candidates: SkillArchiveCandidate[];
  /** the package imported without a selection (root or single wrapper, nothing outside); null when a selection is needed */
  single: string | null;
}

export interface OpenArchive {
  yauzl: typeof import('yauzl');
  zip: ZipFile;
  members: Member[];
  /** package roots ('' = archive root) */
  roots: string[];
  single: string | null;
}

export async function openArchive(buffer: Buffer): Promise<OpenArchive> {
  if (buffer.length < 4 || buffer.length > ZIP_MAX_BYTES) rejectArchive(ARCHIVE_MESSAGES.invalidOrOversized);
  if (buffer[0] !== 0x50 || buffer[1] !== 0x4b) rejectArchive(ARCHIVE_MESSAGES.invalid);
  const yauzl = await import('yauzl');
  let zip: ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buffer, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: false,
      strictFileNames: true,
      autoClose: false,
    });
  } catch {
    rejectArchive(ARCHIVE_MESSAGES.invalid);
  }
  try {
    return { yauzl, zip, ...checkMembers(yauzl, await readCentralDirectory(zip)) };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** Every entry of the central directory, after the entry count is checked. */
async function readCentralDirectory(zip: ZipFile): Promise<Entry[]> {
  if (zip.entryCount === 0) rejectArchive(ARCHIVE_MESSAGES.empty);
  if (zip.entryCount > ZIP_MAX_ARCHIVE_ENTRIES) {
    throw new SkillError(
      'validation',
      `${ARCHIVE_MESSAGES.tooManyEntries}: ${zip.entryCount.toLocaleString('en-US')}; ${ARCHIVE_MESSAGES.entriesOver(ZIP_MAX_ARCHIVE_ENTRIES)}`,
      'file',
      { extensions: { reason: 'archive_too_many_entries', limit: ZIP_MAX_ARCHIVE_ENTRIES } },
    );
  }
  let entries: Entry[];
  try {
    entries = await readEntries(zip);
  } catch {
    rejectArchive(ARCHIVE_MESSAGES.invalid);
  }
  if (entries.length === 0) rejectArchive(ARCHIVE_MESSAGES.empty);
  return entries;
}

async function readEntries(zip: ZipFile): Promise<Entry[]> {
  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve());
    zip.once('error', (error: Error) => reject(error));
    zip.readEntry();
  });
  return entries;
}

export function packageMembers(members: readonly Member[], root: string): { member: Member; segments: string[] }[] {
  const depth = root === '' ? 0 : root.split('/').length;
  return members
    .filter((member) => root === '' || member.path === root || member.path.startsWith(`${root}/`))
    .map((member) => ({ member, segments: member.segments.slice(depth) }))
    .filter((item) => item.segments.length > 0);
}

async function readMemberText(zip: ZipFile, entry: Entry, limit: number): Promise<string | null> {
  if (entry.uncompressedSize > limit) return null;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        stream.destroy();
        return null;
      }
      chunks.push(chunk);
    }
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    return null;
  }
}

/**
 * Checks the archive's members and lists the packages in it with their frontmatter name (openspec skills
 * "Requirement: ZIP import"); nothing is extracted.
 */
export async function inspectSkillArchive(buffer: Buffer): Promise<InspectedArchive> {
  const open = await openArchive(buffer);
  try {
    const candidates: SkillArchiveCandidate[] = [];
    for (const root of open.roots.slice(0, CANDIDATES_MAX)) {
      const file = open.members.find((member) => member.path === (root === '' ? SKILL_FILE : `${root}/${SKILL_FILE}`));
      const text = file ? await readMemberText(open.zip, file.entry, SKILL_MD_MAX_BYTES) : null;
      if (text === null) {
        candidates.push({ name: null, path: root, description: null, error: SKILL_MD_MESSAGES.tooLarge });
        continue;
      }
      const parsed = parseSkillMarkdown(text);
      candidates.push(
        parsed.ok
          ? { name: parsed.manifest.name, path: root, description: parsed.manifest.description, error: null }
          : { name: null, path: root, description: null, error: parsed.error },
      );
    }
    return { candidates, single: open.single };
  } finally {
    open.zip.close();
  }
}
