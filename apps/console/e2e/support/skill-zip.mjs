// A tiny ZIP writer for the browser e2e (yazl, installed in the API workspace and resolvable from the repo root) and
// the Skill package the Skill Market and picker scenarios use.
import yazl from 'yazl';

/** Builds a ZIP in memory from `{ 'path/in/zip': 'text' }`. */
export function zipFiles(files) {
  return new Promise((resolve, reject) => {
    const zip = new yazl.ZipFile();
    const mtime = new Date('2026-01-01T00:00:00Z');
    for (const [path, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content, 'utf8'), path, { mtime, mode: 0o100644 });
    const chunks = [];
    zip.outputStream.on('data', (chunk) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.end();
  });
}

export const SKILL_NAME = 'e2e-notes';
export const SKILL_MARKER = 'E2E-NOTES-MARKER';

/** SKILL.md of the e2e Skill; `line` changes the body so edits are visible. */
export function skillMarkdown(line = `${SKILL_MARKER}: answer with a three-line summary.`) {
  return [
    '---',
    `name: ${SKILL_NAME}`,
    'display_name: E2E Notes',
    'description: Keeps meeting notes tidy. Use when the user asks to summarise notes.',
    'version: 1',
    'tags: [notes, e2e]',
    '---',
    '',
    '# E2E Notes',
    '',
    line,
    '',
  ].join('\n');
}

/** The package as a ZIP with a single wrapper directory, a reference file and a licence. */
export function skillZip() {
  return zipFiles({
    [`${SKILL_NAME}/SKILL.md`]: skillMarkdown(),
    [`${SKILL_NAME}/references/style.md`]: '# Style\n\nShort sentences.\n',
    [`${SKILL_NAME}/LICENSE.txt`]: 'MIT\n',
  });
}
