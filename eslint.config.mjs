/*
 * ESLint (flat config) for the API, the shared libraries, the test MCP servers, the benchmarks and the console.
 *
 * Dependency rules of the API (apps/api/src), enforced below: a folder may import only the folders listed for it
 * (and external packages, @cashcode/contracts, @cashcode/skill-format). The chain is one-way, lowest first:
 *
 *   common, config, events  →  usage  →  llm-settings  →  memory  →  agent  →  approvals  →  health, mcp  →  skills
 *                                                                                      →  chat, evolution
 *                                                                                      →  openai-compat (on chat)
 *                                                                                      →  automations (on chat)  →  channels
 *                                                                                      →  metrics (observes all)
 *
 *   common        config (the AppConfig type)
 *   config        common (pure helpers)
 *   events        common (the typed event map and bus; no feature folder, so every module can publish/listen)
 *   usage         common, config, events (the usage ledger, prices and spend limits: every folder may import it, so
 *                 each model call site checks and records its calls; it imports no feature folder)
 *   llm-settings  common, config, events
 *   memory        llm-settings, common, config, events
 *   agent         memory, llm-settings, common, config, events (never approvals: the loop asks the ToolGate interface)
 *   approvals     agent, memory, llm-settings, common, config, events (ApprovalsModule implements the agent's ToolGate)
 *   health        agent, common, config, events
 *   attachments   agent, memory, llm-settings, common, config, events (chat uploads in the workspace)
 *   mcp           agent, approvals, memory, llm-settings, common, config, events
 *   skills        mcp, agent, approvals, memory, llm-settings, common, config, events
 *   chat          attachments, skills, mcp, agent, approvals, memory, llm-settings, common, config, events
 *   evolution     skills, mcp, agent, approvals, memory, llm-settings, common, config, events
 *   openai-compat chat, skills, mcp, agent, approvals, memory, llm-settings, common, config, events (a second
 *                 transport on top of chat: the OpenAI-compatible `/v1`)
 *   metrics       chat, mcp, agent, approvals, common, config, events (`GET /metrics`: an observer on top that reads the
 *                 chat's event stream and the gateway, MCP and tool registry state; nothing imports it)
 *   channels      chat, automations, attachments, approvals, agent, memory, llm-settings, common, config, events
 *                 (messaging channels such as Telegram: a transport on top of chat; it fills in the automations'
 *                 AUTOMATION_DELIVERY port; nothing imports it)
 *   backup        common, config, events (backups, restores and the data format: it reads the directories as files,
 *                 never through a feature's store; only the root files import it)
 *   automations   chat, skills, mcp, agent, approvals, memory, llm-settings, common, config, events (scheduled prompts
 *                 run as chat turns through ChatService; nothing imports it)
 *   (root files: app.module.ts, bootstrap.ts, server.ts, main.ts: anything; no folder imports them)
 *
 * Modules talk upwards only through events (events/app-events.ts: chat publishes turn.completed, memory and
 * evolution listen) or through ports a higher module fills in (approvals' pre-approval source, the system prompt
 * sections, the tool registry). No file-level import cycle (import-x/no-cycle; a type-only import, erased at build, is not followed;
 * in the console it is: cashcode/no-type-cycle).
 *
 * The console (apps/console) is linted with angular-eslint (TypeScript and templates, with the accessibility rules).
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import angular from 'angular-eslint';
import cashcode from './scripts/lint/no-type-cycle.mjs';

const API = 'apps/api/src';

/** Every API folder that some other folder may be forbidden to import (common, config and events never are). */
const FEATURE_FOLDERS = ['llm-settings', 'memory', 'agent', 'approvals', 'health', 'attachments', 'mcp', 'skills', 'chat', 'evolution', 'openai-compat', 'metrics', 'backup', 'automations', 'channels'];

/** folder → the feature folders it may import (besides common, config and events) */
const ALLOWED = {
  common: [],
  config: [],
  events: [],
  // not in FEATURE_FOLDERS: no folder is forbidden to import usage; usage itself may import no feature folder
  usage: [],
  'llm-settings': [],
  memory: ['llm-settings'],
  agent: ['memory', 'llm-settings'],
  approvals: ['agent', 'memory', 'llm-settings'],
  health: ['agent'],
  attachments: ['agent', 'memory', 'llm-settings'],
  mcp: ['agent', 'approvals', 'memory', 'llm-settings'],
  skills: ['mcp', 'agent', 'approvals', 'memory', 'llm-settings'],
  chat: ['attachments', 'skills', 'mcp', 'agent', 'approvals', 'memory', 'llm-settings'],
  evolution: ['skills', 'mcp', 'agent', 'approvals', 'memory', 'llm-settings'],
  'openai-compat': ['chat', 'skills', 'mcp', 'agent', 'approvals', 'memory', 'llm-settings'],
  metrics: ['chat', 'mcp', 'agent', 'approvals'],
  backup: [],
  automations: ['chat', 'skills', 'mcp', 'agent', 'approvals', 'memory', 'llm-settings'],
  // messaging channels: a transport on top of chat, like openai-compat; nothing imports it
  channels: ['chat', 'automations', 'attachments', 'approvals', 'agent', 'memory', 'llm-settings'],
};

/** The no-restricted-imports block of one API folder: a relative import that climbs into a forbidden folder. */
function folderRules(folder) {
  const forbidden = FEATURE_FOLDERS.filter((other) => other !== folder && !ALLOWED[folder].includes(other));
  const patterns = [
    {
      regex: '^(\\.\\./)+(app\\.module|bootstrap|server|main)$',
      message: 'The root files (app.module, bootstrap, server, main) wire the app; no folder imports them.',
    },
  ];
  if (folder === 'common' || folder === 'config' || folder === 'events') {
    patterns.push({
      regex: `^(\\.\\./)+(${FEATURE_FOLDERS.join('|')})(/|$)`,
      message: `${folder}/ is below every feature module and imports none (see the rules at the top of eslint.config.mjs).`,
    });
  } else if (forbidden.length > 0) {
    patterns.push({
      regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`,
      message: `${folder}/ may import only ${[...ALLOWED[folder], 'common', 'config', 'events'].join(', ')} (see the rules at the top of eslint.config.mjs).`,
    });
  }
  if (folder === 'config') {
    patterns.push({ regex: '^(\\.\\./)+events(/|$)', message: 'config/ imports only common/.' });
  }
  if (folder === 'common') {
    patterns.push({ regex: '^(\\.\\./)+events(/|$)', message: 'common/ imports only config/ (the AppConfig type).' });
  }
  if (folder === 'events') {
    patterns.push({ regex: '^(\\.\\./)+config(/|$)', message: 'events/ imports only common/.' });
  }
  return {
    files: [`${API}/${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.angular/**', 'bench/results/**'] },
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

  // ---------------------------------------------------------------------------------------------- import cycles
  {
    files: ['apps/*/src/**/*.ts', 'apps/api/test/**/*.ts', 'libs/*/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts', '.js'],
      // the workspace packages are checked where they live; their built output is not followed
      'import-x/ignore': ['node_modules', '/dist/'],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },

  {
    // type-only imports count too (import-x/no-cycle skips them: they are erased at build): a cycle of types still
    // ties files into one unit that cannot be read or moved alone. Rule and tests: scripts/lint/no-type-cycle*.mjs.
    files: ['apps/console/src/**/*.ts', 'apps/api/src/**/*.ts', 'libs/*/src/**/*.ts'],
    plugins: { cashcode },
    rules: { 'cashcode/no-type-cycle': 'error' },
  },

  // ---------------------------------------------------------------------------------------------- API layering
  ...Object.keys(ALLOWED).map(folderRules),
  {
    // cross-module checks: hostile input handling exercises agent and MCP helpers, and the transport-errors spec
    // checks that errors raised by agent and llm-settings render through common's problem filter and WS mapping
    files: [`${API}/common/hostile-text.spec.ts`, `${API}/common/transport-errors.spec.ts`],
    rules: { 'no-restricted-imports': 'off' },
  },

  // ---------------------------------------------------------------------------------------------- console
  {
    files: ['apps/console/src/**/*.ts'],
    extends: [...angular.configs.tsRecommended],
    processor: angular.processInlineTemplates,
    rules: {
      '@angular-eslint/directive-selector': ['error', { type: 'attribute', prefix: 'cc', style: 'camelCase' }],
      '@angular-eslint/component-selector': ['error', { type: 'element', prefix: 'cc', style: 'kebab-case' }],
    },
  },
  {
    files: ['apps/console/src/**/*.html'],
    extends: [...angular.configs.templateRecommended, ...angular.configs.templateAccessibility],
  },
  {
    // The capability picker is the listbox of an ARIA combobox: focus stays in the message box, which handles the
    // keys and points at the active option with aria-activedescendant; options are clicked, never focused.
    files: ['apps/console/src/app/chat/capability-picker/capability-picker.html'],
    rules: {
      '@angular-eslint/template/click-events-have-key-events': 'off',
      '@angular-eslint/template/interactive-supports-focus': 'off',
    },
  },
);
