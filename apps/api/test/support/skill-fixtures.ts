/**
 * Skill test fixtures: SKILL.md texts, packages written straight to disk (manual placement), and ZIP archives built
 * with yazl — including hostile ones, patched at the byte level where yazl itself refuses (absolute names, `..`,
 * backslashes, encryption flags, lying sizes).
 */
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { ZipFile } from 'yazl';

export interface SkillMdOptions {
  description?: string;
  body?: string;
  /** extra frontmatter lines (YAML) */
  extra?: string;
}

export function skillMd(name: string, options: SkillMdOptions = {}): string {
  const lines = ['---', `name: ${name}`, `description: ${options.description ?? `The ${name} test skill`}`];
  if (options.extra) lines.push(options.extra);
  lines.push('---', '', options.body ?? `# ${name}\n\nFollow these steps for ${name}.`, '');
  return lines.join('\n');
}

/** Writes a package directory with the given files (paths relative to the package). */
export async function writePackage(root: string, dir: string, files: Record<string, string | Buffer>): Promise<string> {
  const packageDir = join(root, dir);
  await fs.mkdir(packageDir, { recursive: true });
  for (const [rel, data] of Object.entries(files)) {
    const target = join(packageDir, ...rel.split('/'));
    await fs.mkdir(dirname(target), { recursive: true });
    await fs.writeFile(target, data);
  }
  return packageDir;
}

/** Every entry of a directory tree (relative paths, sorted), hidden ones included. */
export async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (current: string, prefix: string) => {
    let entries;
    try {
      entries = await fs.readdir(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      out.push(entry.isDirectory() ? `${rel}/` : rel);
      if (entry.isDirectory()) await walk(join(current, entry.name), rel);
    }
  };
  await walk(dir, '');
  return out.sort();
}

export interface ZipEntrySpec {
  name: string;
  /** file content; omitted with `directory: true` */
  data?: string | Buffer;
  directory?: boolean;
  /** Unix mode including the file type bits, e.g. 0o120777 for a symlink */
  mode?: number;
  compress?: boolean;
}

/** Builds a ZIP with yazl (valid names only; patch hostile ones afterwards). */
export function buildZip(entries: readonly ZipEntrySpec[]): Promise<Buffer> {
  const zip = new ZipFile();
  const mtime = new Date('2026-01-01T00:00:00Z');
  for (const entry of entries) {
    if (entry.directory) {
      zip.addEmptyDirectory(entry.name, { mtime, ...(entry.mode !== undefined ? { mode: entry.mode } : {}) });
    } else {
      const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : (entry.data ?? Buffer.alloc(0));
      zip.addBuffer(data, entry.name, {
        mtime,
        compress: entry.compress ?? true,
        ...(entry.mode !== undefined ? { mode: entry.mode } : {}),
      });
    }
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** Replaces every occurrence of a placeholder name by another of the same UTF-8 length (local + central headers). */
export function patchName(zip: Buffer, placeholder: string, replacement: string): Buffer {
  const from = Buffer.from(placeholder, 'utf8');
  const to = Buffer.from(replacement, 'utf8');
  if (from.length !== to.length) throw new Error('patchName needs names of the same byte length');
  const out = Buffer.from(zip);
  let index = out.indexOf(from);
  let count = 0;
  while (index !== -1) {
    to.copy(out, index);
    count++;
    index = out.indexOf(from, index + to.length);
  }
  if (count === 0) throw new Error(`placeholder not found: ${placeholder}`);
  return out;
}

interface CentralEntry {
  /** offset of the central directory record */
  central: number;
  /** offset of the local file header */
  local: number;
  name: string;
}

function centralEntries(zip: Buffer): CentralEntry[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('no end of central directory');
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const out: CentralEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error('bad central directory');
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    out.push({
      central: offset,
      local: zip.readUInt32LE(offset + 42),
      name: zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8'),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

function entryNamed(zip: Buffer, name: string): CentralEntry {
  const entry = centralEntries(zip).find((e) => e.name === name);
  if (!entry) throw new Error(`entry not found: ${name}`);
  return entry;
}

/** Sets general-purpose flag bits of an entry (both headers), e.g. 0x1 = encrypted. */
export function setEntryFlags(zip: Buffer, name: string, bits: number): Buffer {
  const out = Buffer.from(zip);
  const entry = entryNamed(out, name);
  out.writeUInt16LE(out.readUInt16LE(entry.central + 8) | bits, entry.central + 8);
  out.writeUInt16LE(out.readUInt16LE(entry.local + 6) | bits, entry.local + 6);
  return out;
}

/** Declares a different uncompressed size for an entry (both headers): a lying archive. */
export function setDeclaredSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const entry = entryNamed(out, name);
  out.writeUInt32LE(size, entry.central + 24);
  out.writeUInt32LE(size, entry.local + 22);
  return out;
}
