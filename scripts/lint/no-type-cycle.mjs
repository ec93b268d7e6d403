// ESLint rule `cashcode/no-type-cycle`: no file may reach itself through relative imports, type-only imports included.
// import-x/no-cycle guards the run-time order of modules and so skips `import type` (erased at build); a cycle of
// types still ties two files into one unit that can only be read, moved or tested together, so this rule follows
// every import, export-from, `import()` and `import('…').Type` that TypeScript itself sees (ts.preProcessFile).
// Only relative specifiers are followed: a workspace package is checked where it lives.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** file → { mtimeMs, deps }: the files it imports, re-read when it changes (editors keep one ESLint process) */
const importsCache = new Map();

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The .ts file a relative specifier names from `fromFile`, or null (a package, or nothing on disk). */
export function resolveRelative(fromFile, specifier) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return null;
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = [`${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${base}.ts`, join(base, 'index.ts'), base];
  return candidates.find((candidate) => /\.[mc]?ts$/.test(candidate) && isFile(candidate)) ?? null;
}

function importsOf(file) {
  let mtimeMs;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const cached = importsCache.get(file);
  if (cached && cached.mtimeMs === mtimeMs) return cached.deps;
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const deps = [...new Set(importedFiles.map((entry) => resolveRelative(file, entry.fileName)).filter(Boolean))];
  importsCache.set(file, { mtimeMs, deps });
  return deps;
}

/** The shortest chain of files from `start` back to `target` (both included), or null. */
function pathBack(start, target) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const dep of importsOf(file)) {
      if (dep === target) {
        const chain = [target];
        for (let at = file; at !== null; at = previous.get(at)) chain.unshift(at);
        return chain;
      }
      if (!previous.has(dep)) {
        previous.set(dep, file);
        queue.push(dep);
      }
    }
  }
  return null;
}

export const noTypeCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles between files, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import cycle (type-only imports count): {{chain}}.' },
  },
  create(context) {
    const file = context.physicalFilename;
    if (!/\.[mc]?ts$/.test(file)) return {};
    const reported = new Set();
    function check(node, source) {
      if (!source || typeof source.value !== 'string') return;
      const target = resolveRelative(file, source.value);
      if (target === null || target === file || reported.has(target)) return;
      const chain = pathBack(target, file);
      if (chain === null) return;
      reported.add(target);
      const names = [file, ...chain].map((entry) => relative(dirname(file), entry) || '.');
      context.report({ node: source, messageId: 'cycle', data: { chain: names.join(' → ') } });
    }
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
      TSExternalModuleReference: (node) => check(node, node.expression),
      TSImportType: (node) => check(node, node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.source),
    };
  },
};

export default { rules: { 'no-type-cycle': noTypeCycle } };
