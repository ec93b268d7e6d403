// node --test scripts/lint/no-type-cycle.test.mjs
// The type-cycle rule on small fixture trees: what it reports (type-only cycles, longer chains, re-exports, import
// types) and what it lets pass (one-way imports, packages, a file importing itself).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

import cashcode from './no-type-cycle.mjs';

const fixtures = [];
after(() => fixtures.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Lints every file of a fixture tree; returns "file: message" for each report. */
async function lint(files) {
  const dir = mkdtempSync(join(tmpdir(), 'no-type-cycle-'));
  fixtures.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const eslint = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { cashcode },
        rules: { 'cashcode/no-type-cycle': 'error' },
      },
    ],
  });
  const results = await eslint.lintFiles(['**/*.ts']);
  return results
    .flatMap((result) => result.messages.map((message) => `${result.filePath.slice(dir.length + 1)}: ${message.message}`))
    .sort();
}

describe('cashcode/no-type-cycle', () => {
  it('reports a cycle made only of type imports, in both files', async () => {
    const reports = await lint({
      'a.ts': "import type { B } from './b';\nexport interface A { b?: B }\n",
      'b.ts': "import { type A } from './a';\nexport interface B { a?: A }\n",
    });
    assert.deepEqual(reports, [
      'a.ts: Import cycle (type-only imports count): a.ts → b.ts → a.ts.',
      'b.ts: Import cycle (type-only imports count): b.ts → a.ts → b.ts.',
    ]);
  });

  it('reports a longer chain through a re-export and an import type, and a value import with a type import back', async () => {
    const reports = await lint({
      'state/types.ts': "export type { Row } from '../rows';\n",
      'rows.ts': "export type Row = { helper: import('./helpers/format.js').Format };\n",
      'helpers/format.ts': "import type { Row } from '../state/types';\nexport type Format = (row: Row) => string;\n",
      'store.ts': "import { value } from './value';\nexport type Store = { n: number };\n",
      'value.ts': "import type { Store } from './store';\nexport const value = (store: Store) => store.n;\n",
    });
    assert.equal(reports.length, 5);
    assert.ok(reports.includes('rows.ts: Import cycle (type-only imports count): rows.ts → helpers/format.ts → state/types.ts → rows.ts.'));
    assert.ok(reports.includes('store.ts: Import cycle (type-only imports count): store.ts → value.ts → store.ts.'));
  });

  it('lets one-way imports, packages and a self-import pass', async () => {
    const reports = await lint({
      'types.ts': "import type { Readable } from 'node:stream';\nexport interface T { s?: Readable }\n",
      'reducers.ts': "import type { T } from './types';\nimport { helper } from './helper';\nexport const r = (t: T) => helper(t);\n",
      'helper.ts': "import type { T } from './types';\nimport type { Self } from './helper';\nexport type Self = T;\nexport const helper = (t: T) => t;\n",
      'index.ts': "export * from './reducers';\nexport type { T } from './types';\n",
    });
    assert.deepEqual(reports, []);
  });
});
