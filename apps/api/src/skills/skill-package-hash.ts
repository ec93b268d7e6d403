/**
 * The content hash a grant of a Skill's pre-approvals is bound to, and a cheap fingerprint to notice a change after it.
 *
 * `SkillRecord.hash` covers SKILL.md only, but a Skill's scripts and resources matter as much as its instructions: a
 * grant for `Bash(sh scripts/run.sh)` approves whatever `scripts/run.sh` holds. The package hash therefore covers
 * SKILL.md and every supporting file (by package-relative path, size and bytes, in a fixed order); only the
 * server-owned `_meta.json` (enabled flag, timestamps) is left out, so enabling or disabling a Skill keeps its grant.
 *
 * The fingerprint is a synchronous stat walk of the same files (path, kind, size, mtime, ctime, inode; ctime cannot be
 * set back by a writer), cheap enough to compare before every pre-approved call: a package whose fingerprint moved
 * since it was hashed pre-approves nothing until it is hashed (and granted) again.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { META_FILE, SKILL_FILE } from '@cashcode/skill-format';

const DOMAIN = 'cashcode-skill-package/1\0';

/** The root entries the hash and the fingerprint leave out: `_meta.json` and its atomic-write temporaries. */
function serverOwned(name: string): boolean {
  return name === META_FILE || name.startsWith(`.${META_FILE}.`);
}

/** sha256 hex over SKILL.md and the supporting files `files` (package-relative, as SkillStore lists them). */
export async function packageContentHash(dir: string, files: readonly string[]): Promise<string> {
  const hash = createHash('sha256').update(DOMAIN);
  const ordered = [SKILL_FILE, ...[...files].filter((rel) => rel !== SKILL_FILE && !serverOwned(rel)).sort()];
  for (const rel of ordered) {
    const bytes = await fs.promises.readFile(path.join(dir, ...rel.split('/')));
    hash.update(`${rel}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest('hex');
}

/**
 * A fingerprint of every entry of the package (the root directory's own stat excluded: renaming `_meta.json` into
 * place touches it). Null when the package cannot be walked (gone, replaced by a file).
 */
export function packageFingerprint(dir: string): string | null {
  const parts: string[] = [];
  const walk = (current: string, rel: string): boolean => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return false;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (rel === '' && serverOwned(entry.name)) continue;
      const full = path.join(current, entry.name);
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      let stat: fs.BigIntStats;
      try {
        stat = fs.lstatSync(full, { bigint: true });
      } catch {
        return false;
      }
      parts.push(`${childRel}\0${stat.mode}\0${stat.size}\0${stat.mtimeNs}\0${stat.ctimeNs}\0${stat.ino}`);
      if (stat.isDirectory() && !walk(full, childRel)) return false;
    }
    return true;
  };
  if (!walk(dir, '')) return null;
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}
