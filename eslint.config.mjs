// ESLint (flat config) for the API, the shared libraries and the test MCP servers; the console uses Angular's own
// checks (strict templates).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'apps/console/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  regexp.configs['flat/recommended'],
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      // Every regular expression may meet text the server does not control (exec output, tool arguments, MCP
      // results, fetched pages, log lines): none may backtrack super-linearly, neither within one match attempt nor
      // across the attempts a global/sticky search makes while moving through the input.
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignoreSticky: false, ignorePartial: false }],
      // Style only, off: `[A-Za-z0-9_-]` spelled out mirrors the character sets the specs and contracts state, and
      // rewriting it as `[\w-]` or with the `i` flag changes no behaviour and no running time.
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
    },
  },
);
