#!/usr/bin/env node
// Fails when a tracked file refers to something that is not in the repository:
//   - a numbered section of an outside document (`§4.2`, `spec §7`, `reference §16.1`);
//   - a path through `../shared` that does not resolve (the old sibling directory of design notes; the console's own
//     `src/app/shared` imports resolve and pass);
//   - a document path ending in `.md` that names no tracked file: an upper-case document name (`DESIGN.md`) that is
//     not one of the file names the server or Skill packages use at run time, a path that starts with a top-level
//     directory of the repository (`openspec/specs/x/spec.md`), or a relative Markdown link (`](docs/x.md)`).
// Scans `git ls-files` (package-lock.json and binary files skipped), prints `file:line: reason` per finding and
// exits 1 when there is any. Usage: node scripts/check-references.mjs [--root <dir>]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, posix, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const rootArgIndex = process.argv.indexOf('--root');
const root = resolve(
  rootArgIndex > 0 ? process.argv[rootArgIndex + 1] : join(dirname(fileURLToPath(import.meta.url)), '..'),
);

/** Files never scanned: generated or third-party text. */
const SKIPPED = new Set(['package-lock.json', 'scripts/check-references.mjs', 'scripts/check-references.test.mjs']);

/**
 * Upper-case `.md` names that are not repository documents: files the server writes or reads at run time
 * (memory, soul) and the conventional files of a Skill package.
 */
const RUNTIME_DOCUMENT_NAMES = new Set(['SKILL.md', 'MEMORY.md', 'SOUL.md', 'HISTORY.md', 'FORMS.md', 'REFERENCE.md']);

const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  .split('\0')
  .filter((f) => f && !SKIPPED.has(f));
const tracked = new Set(files);
const trackedBasenames = new Set(files.map((f) => posix.basename(f)));
// `data/` holds run-time files (its tracked README describes them), so paths below it are not repository documents
const topLevelDirs = new Set(files.filter((f) => f.includes('/')).map((f) => f.slice(0, f.indexOf('/'))));
topLevelDirs.delete('data');

/** Whether a relative import-like path from `file` names an existing file or directory (with the usual endings). */
function resolvesFrom(file, target) {
  const base = join(root, dirname(file), target);
  // a path that leaves the repository never counts, whatever happens to sit beside the checkout
  if (relative(root, base).startsWith('..')) return false;
  const candidates = [base, `${base}.ts`, `${base}.js`, `${base}.mjs`, `${base}.scss`, `${base}.css`, `${base}.html`];
  const parent = dirname(base);
  const leaf = base.slice(parent.length + 1);
  candidates.push(join(parent, `_${leaf}.scss`), join(base, 'index.ts'), join(base, '_index.scss'));
  return candidates.some((c) => existsSync(c));
}

/** Whether a repository-relative or file-relative document path names a tracked file. */
function documentExists(file, target) {
  const clean = target.replace(/^\.\//, '');
  if (tracked.has(normalize(clean).split('\\').join('/'))) return true;
  const fromFile = relative(root, join(root, dirname(file), clean)).split('\\').join('/');
  return tracked.has(fromFile) || existsSync(join(root, fromFile));
}

const SECTION = /§\s*\d/;
const SHARED = /(?:\.\.\/)+shared(?:\/[\w.@-]+)*/g;
const MD_TOKEN = /(?<![\w./-])[\w./-]*[\w-]\.md\b/g;
const MD_LINK = /\]\(([^)\s#]+\.md)(?:#[^)]*)?\)/g;

function isBinary(buffer) {
  return buffer.subarray(0, 8000).includes(0);
}

const findings = [];
for (const file of files) {
  const path = join(root, file);
  let buffer;
  try {
    if (!statSync(path).isFile()) continue;
    buffer = readFileSync(path);
  } catch {
    continue; // deleted in the work tree but still tracked
  }
  if (isBinary(buffer)) continue;
  const lines = buffer.toString('utf8').split('\n');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    const reasons = [];
    if (SECTION.test(line)) reasons.push('cites a numbered section (§) of a document that is not in the repository');
    for (const match of line.matchAll(SHARED)) {
      if (!resolvesFrom(file, match[0])) reasons.push(`refers to ${match[0]}, which is outside the repository`);
    }
    for (const match of line.matchAll(MD_TOKEN)) {
      const token = match[0].replace(/^\.\//, '');
      const name = posix.basename(token);
      if (RUNTIME_DOCUMENT_NAMES.has(name)) continue;
      const firstSegment = token.includes('/') ? token.slice(0, token.indexOf('/')) : '';
      const upperCaseDocument = /^[A-Z][A-Z0-9_-]*\.md$/.test(name);
      const repositoryPath = topLevelDirs.has(firstSegment);
      if (upperCaseDocument && !token.includes('/') && !trackedBasenames.has(name)) {
        reasons.push(`refers to ${token}, which is not in the repository`);
      } else if (repositoryPath && !documentExists(file, token)) {
        reasons.push(`refers to ${token}, which is not in the repository`);
      }
    }
    if (file.endsWith('.md')) {
      for (const match of line.matchAll(MD_LINK)) {
        const target = match[1];
        if (/^[a-z]+:/i.test(target)) continue;
        if (!documentExists(file, target)) reasons.push(`links to ${target}, which is not in the repository`);
      }
    }
    for (const reason of new Set(reasons)) findings.push(`${where}: ${reason}`);
  });
}

if (findings.length > 0) {
  const byFile = new Map();
  for (const finding of findings) {
    const file = finding.slice(0, finding.indexOf(':'));
    byFile.set(file, (byFile.get(file) ?? 0) + 1);
  }
  process.stdout.write(`${findings.join('\n')}\n\n`);
  process.stdout.write(
    `check-references: ${findings.length} reference(s) to things outside the repository in ${byFile.size} file(s):\n`,
  );
  for (const [file, count] of [...byFile].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    process.stdout.write(`  ${String(count).padStart(4)}  ${file}\n`);
  }
  process.stdout.write(
    'Replace each with a plain explanation or a reference inside the repository ' +
      '(an openspec requirement, ARCHITECTURE.md, SECURITY.md, CONTRIBUTING.md).\n',
  );
  process.exit(1);
}
process.stdout.write(`check-references: ${files.length} tracked files, no references outside the repository\n`);
