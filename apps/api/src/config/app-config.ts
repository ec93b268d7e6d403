import { homedir, platform } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { ExecSandboxMode } from '@cashcode/contracts';
import {
  ConfigError,
  EXEC_ENV_ALLOWLIST,
  parseAtLeast,
  parseAuthMode,
  parseBoolean,
  parseEnableFlag,
  parseHost,
  parseInteger,
  parseList,
  parseLogLevel,
  parsePort,
  parseSandboxMode,
  parseTrustedProxies,
  parseUrl,
  pickEnv,
  type LogLevel,
} from './env-values';
import { loadBrowserConfig, type BrowserConfig } from './browser-config';

import { loadSubagentConfig, type SubagentConfig } from './subagent-config';
export { ConfigError, EXEC_ENV_ALLOWLIST, parseTrustedProxies, type LogLevel } from './env-values';

/**
 * The server's configuration, read once at boot from the environment (and `.env`) by `loadConfig`; each variable is
 * parsed by env-values.ts and documented in README "Configuration".
 */
export const APP_CONFIG = Symbol('APP_CONFIG');

export interface AppConfig {
  /** repository root (where package.json, mcp_servers/ and apps/console/dist live) */
  rootDir: string;
  host: string;
  port: number;
  wsHost: string;
  wsPort: number;
  /** true when the gateway shares the HTTP server at path /ws */
  wsSharesHttp: boolean;
  dataDir: string;
  memoryDir: string;
  workspaceDir: string;
  configDir: string;
  logDir: string;
  /** built console (served at /); may not exist in API-only tests */
  consoleDir: string;
  allowedOrigins: string[];
  allowedHosts: string[];
  /** CASHCODE_TRUSTED_PROXIES as `address/bits` ranges: peers whose X-Forwarded-For names the client (default none) */
  trustedProxies: string[];
  /** CASHCODE_CONSOLE_DEV: the Angular dev server (`npm run dev`, port 4200) is in use; its origins are allowed */
  consoleDev: boolean;
  /**
   * the server's API token: CASHCODE_API_TOKEN, or (filled in at boot, common/api-token-file.ts) the random token of
   * `<configDir>/settings/api-token`; null only with CASHCODE_AUTH=off
   */
  apiToken: string | null;
  /** CASHCODE_AUTH (`on` default, `off`): whether REST, the gateway, `/metrics` and `/v1` need the token or the cookie */
  authEnabled: boolean;
  fileLogLevel: LogLevel;
  consoleLogLevel: LogLevel;
  logRetentionDays: number;
  /**
   * seconds between Dream runs (DREAM_INTERVAL, openspec memory); 0 disables the schedule (POST /api/memory/dream still
   * works)
   */
  dreamIntervalSec: number;
  /** consolidate a chat once its in-memory history exceeds this many characters (openspec memory: 40,000) */
  consolidationThresholdChars: number;
  /** timeout of one background model call: a consolidation summary or one Dream phase (openspec memory: 120 s) */
  backgroundModelTimeoutMs: number;
  /** days of model calls the usage ledger keeps (CASHCODE_USAGE_RETENTION_DAYS, openspec usage: 400) */
  usageRetentionDays: number;
  /** output tokens a spend-limit estimate assumes when a call sets no max_tokens (CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS: 4096) */
  usageDefaultMaxOutputTokens: number;
  /** whether the model writes a chat's title after its first turn (CASHCODE_MODEL_TITLES, openspec chat) */
  modelTitles: boolean;
  /** ReAct iterations before the final no-tools answer */
  maxIterations: number;
  /** sub-agents of the `delegate` tool: depth, concurrency, iteration cap (subagent-config.ts) */
  subagents: SubagentConfig;
  /** CASHCODE_MAX_TOOL_CALLS (default 50, 1–1000): tool calls one turn may run before the runaway guard stops it */
  maxToolCallsPerTurn: number;
  /** CASHCODE_TOOL_REPEAT_LIMIT (default 3, 2–100): identical calls (tool, arguments, result) that stop a turn */
  toolRepeatLimit: number;
  /** CASHCODE_ATTACHMENT_MAX_BYTES (default 10 MiB): bytes of one file uploaded into a chat's attachments folder */
  attachmentMaxBytes: number;
  /** CASHCODE_ATTACHMENT_MAX_REQUEST_BYTES (default 25 MiB): bytes of all files of one upload request */
  attachmentMaxRequestBytes: number;
  /** CASHCODE_ATTACHMENT_MAX_FILES (default 10): files of one upload request */
  attachmentMaxFiles: number;
  /** provider retries for transient/rate-limit errors (per model call) */
  llmMaxRetries: number;
  llmTimeoutMs: number;
  /** model discovery (`/api/settings/llm/test` and `/models`) timeout, openspec llm-settings: 15 s */
  llmDiscoveryTimeoutMs: number;
  execEnabled: boolean;
  execTimeoutMs: number;
  /**
   * CASHCODE_EXEC_SANDBOX: `auto` (default) confines exec in bubblewrap when a probe run works, else runs it
   * unconfined; `bwrap` requires the sandbox (the server refuses to start without a working one); `off` never uses it
   */
  execSandbox: ExecSandboxMode;
  /** CASHCODE_EXEC_NETWORK (default on): `off` gives sandboxed commands no network (their own empty network namespace) */
  execNetwork: boolean;
  /** CASHCODE_APPROVAL_TIMEOUT_SEC (default 600, 1–86400): a pending approval request is denied after this long */
  approvalTimeoutSec: number;
  /** CASHCODE_AUTOMATION_MIN_INTERVAL_SEC (default 60, 1–3600): the shortest automation interval (tests lower it) */
  automationMinIntervalSec: number;
  fetchAllowPrivate: boolean;
  /** the `browser` tool (browser-config.ts) */
  browser: BrowserConfig;
  fetchMaxChars: number;
  /** web_fetch: one deadline for connect, headers and body of all hops (openspec builtin-tools: 15 s) */
  fetchTimeoutMs: number;
  /** web_fetch: bytes of a response body read (raw and decompressed) */
  fetchMaxBytes: number;
  /** web_search: request timeout (openspec builtin-tools: 10 s) */
  searchTimeoutMs: number;
  /** grep: time budget of the regex search */
  grepTimeoutMs: number;
  /** exec: the allowlisted part of the server environment handed to commands (never secrets) */
  execEnv: Record<string, string>;
  /** built-in MCP catalog (read-only; stdio entries allowed), default <rootDir>/mcp_servers/mcp_config.json */
  mcpCatalogPath: string;
  /**
   * every built-in catalog file, read in order (a later file's entry replaces an earlier one of the same name):
   * CASHCODE_MCP_CATALOG is a list separated by the platform path delimiter (`:`; `;` on Windows) and replaces the
   * shipped catalog, unless it starts with `+`, which keeps the shipped catalog first
   */
  mcpCatalogPaths: string[];
  /** desired connection state of the MCP servers (reconnected after a restart; 0600), <dataDir>/mcp/connections.json */
  mcpConnectionStatePath: string;
  /** user MCP catalog (network transports only; 0600), <dataDir>/mcp/servers.json */
  mcpUserCatalogPath: string;
  /** MCP tool-schema cache, one JSON per server: <dataDir>/mcp_cache */
  mcpCacheDir: string;
  /** the persisted session search index (SQLite, 0600; derived from the histories): <dataDir>/memory-index/sessions.sqlite */
  sessionIndexFile: string;
  /** MCP OAuth tokens and client registrations, one 0600 JSON per server: <dataDir>/mcp/oauth */
  mcpOAuthDir: string;
  /**
   * CASHCODE_PUBLIC_URL: the address a browser reaches this server at (origin, optional path prefix), used for
   * redirect URIs such as the MCP OAuth callback; null = http://<host>:<port> (a wildcard host becomes 127.0.0.1)
   */
  publicUrl: string | null;
  /** MCP initialize + tools/list timeout (openspec mcp: 30 s) */
  mcpConnectTimeoutMs: number;
  /** MCP tool call timeout, reset by progress notifications (openspec mcp: 30 s) */
  mcpToolTimeoutMs: number;
  /**
   * a tool result longer than this (characters) is kept whole as an artifact of the chat and the model gets a head/tail
   * preview and `read_artifact`; 0 turns it off
   */
  toolOutputBudgetChars: number;
  /**
   * CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS (default 3): previous user turns whose tool results the model gets whole;
   * older ones are stubbed in the request at the chat's context boundaries (agent/context-window.ts)
   */
  contextKeepToolResultsTurns: number;
  searxngUrl: string | null;
  /** CASHCODE_TELEGRAM_API_ROOT: the Bot API server (a self-hosted one, or a test stand-in); default https://api.telegram.org */
  telegramApiRoot: string;
  /** read-only built-in Skills (openspec skills), <rootDir>/apps/api/src/skills/builtin */
  skillsBuiltinDir: string;
  /** user Skills: <dataDir>/skills/user */
  skillsUserDir: string;
  /** agent-owned Skills: <dataDir>/skills/agent */
  skillsAgentDir: string;
  /** Skill version snapshots: <dataDir>/skill-snapshots */
  skillSnapshotsDir: string;
  /** PATH searched for the `bin:` requirements of Skills */
  skillBinPath: string;
  /** names (never values) of the non-empty environment variables, for the `env:` requirements of Skills */
  presentEnvNames: string[];
  legacyDeepseekApiKey: string | null;
  legacyDeepseekApiBase: string | null;
  /**
   * SKILL_EVOLUTION_ENABLED (`1`/`true`/`yes`/`on`, case-insensitive; default off): collect evidence, propose Skills
   * (openspec skill-evolution)
   */
  skillEvolutionEnabled: boolean;
  /** SKILL_EVOLUTION_MIN_TOOL_CALLS (default 2, min 1): tool calls a turn needs to count as evidence */
  skillEvolutionMinToolCalls: number;
  /** SKILL_EVOLUTION_RECURRENCE (default 2, min 2): evidence records of one fingerprint that trigger a proposal */
  skillEvolutionRecurrence: number;
  /** SKILL_EVOLUTION_MAX_CONTEXT_CHARS (default 12000, min 1000): size of the evolver's request */
  skillEvolutionMaxContextChars: number;
  /** SKILL_EVOLUTION_MAX_CONCURRENT (default 1, min 1): evaluations running at once */
  skillEvolutionMaxConcurrent: number;
  /** SKILL_EVOLUTION_MAX_EVIDENCE (default 500, min 10): evidence files kept (oldest deleted first) */
  skillEvolutionMaxEvidence: number;
  /** evidence and proposals: <dataDir>/skill-evolution */
  skillEvolutionDir: string;
}


export function defaultConfigRoot(env: NodeJS.ProcessEnv): string {
  const home = homedir();
  switch (platform()) {
    case 'win32':
      return join(env['LOCALAPPDATA'] || env['APPDATA'] || join(home, 'AppData', 'Local'), 'CashCode');
    case 'darwin':
      return join(home, 'Library', 'Application Support', 'CashCode');
    default:
      return join(env['XDG_CONFIG_HOME'] || join(home, '.config'), 'cashcode');
  }
}

/** Port of the Angular dev server (`ng serve`, `npm run dev`). */
export const CONSOLE_DEV_PORT = 4200;

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Builds the typed configuration from the environment; the only place that reads process.env.
 * Throws ConfigError with a readable message on a bad value.
 */
export function loadConfig(env: NodeJS.ProcessEnv, rootDir: string): AppConfig {
  const abs = (value: string, base: string) => (isAbsolute(value) ? value : resolve(base, value));
  /** an integer variable read by its own name */
  const int = (name: string, fallback: number, min: number, max: number) => parseInteger(name, env[name], fallback, min, max);
  const host = parseHost('CASHCODE_HOST', env['CASHCODE_HOST'], '127.0.0.1');
  const port = parsePort('CASHCODE_PORT', env['CASHCODE_PORT'], 8000);
  const wsHost = parseHost('WS_HOST', env['WS_HOST'], host);
  const wsPort = parsePort('WS_PORT', env['WS_PORT'], 8765);
  const dataDir = abs(env['CASHCODE_DATA_DIR']?.trim() || 'data', rootDir);
  const memoryDir = abs(env['MEMORY_DIR']?.trim() || join(dataDir, 'memory'), rootDir);
  const workspaceDir = abs(env['WORKSPACE_DIR']?.trim() || join(dataDir, 'workspace'), rootDir);
  const configDir = abs(env['CASHCODE_CONFIG_DIR']?.trim() || defaultConfigRoot(env), rootDir);
  const logDir = abs(env['CASHCODE_LOG_DIR']?.trim() || join(dataDir, 'logs'), rootDir);
  const apiToken = env['CASHCODE_API_TOKEN']?.trim() || null;
  if (apiToken !== null && apiToken.length < 16) {
    throw new ConfigError('CASHCODE_API_TOKEN must be at least 16 characters long');
  }
  const authEnabled = parseAuthMode(env['CASHCODE_AUTH']);
  if (!authEnabled && apiToken !== null) {
    throw new ConfigError('CASHCODE_AUTH=off cannot be combined with CASHCODE_API_TOKEN: unset one of them');
  }
  for (const [name, value] of [
    ['CASHCODE_HOST', host],
    ['WS_HOST', wsHost],
  ] as const) {
    if (!isLoopbackHost(value) && !authEnabled) {
      throw new ConfigError(`CASHCODE_AUTH=off is refused with ${name}=${value}: it is only allowed on a loopback address`);
    }
    if (!isLoopbackHost(value) && apiToken === null) {
      throw new ConfigError(`${name}=${value} is not a loopback address: set CASHCODE_API_TOKEN to bind it`);
    }
  }
  // The Angular dev server (`npm run dev`, port 4200) is another origin; it is trusted only while it is in use.
  const consoleDev = parseBoolean('CASHCODE_CONSOLE_DEV', env['CASHCODE_CONSOLE_DEV'], false);
  const consoleOrigins = [port, ...(consoleDev ? [CONSOLE_DEV_PORT] : [])].flatMap((p) => [
    `http://127.0.0.1:${p}`,
    `http://localhost:${p}`,
  ]);
  const allowedOrigins = [...new Set([...consoleOrigins, ...parseList(env['CASHCODE_ALLOWED_ORIGINS'])])];
  const trustedProxies = parseTrustedProxies('CASHCODE_TRUSTED_PROXIES', env['CASHCODE_TRUSTED_PROXIES']);
  return {
    rootDir,
    host,
    port,
    wsHost,
    wsPort,
    wsSharesHttp: wsPort === port,
    dataDir,
    memoryDir,
    workspaceDir,
    configDir,
    logDir,
    consoleDir: abs(env['CASHCODE_CONSOLE_DIR']?.trim() || join('apps', 'console', 'dist', 'console', 'browser'), rootDir),
    allowedOrigins,
    allowedHosts: parseList(env['CASHCODE_ALLOWED_HOSTS']).map((h) => h.toLowerCase()),
    trustedProxies,
    consoleDev,
    apiToken,
    authEnabled,
    fileLogLevel: parseLogLevel('CASHCODE_FILE_LOG_LEVEL', env['CASHCODE_FILE_LOG_LEVEL'], 'debug'),
    consoleLogLevel: parseLogLevel('CASHCODE_CONSOLE_LOG_LEVEL', env['CASHCODE_CONSOLE_LOG_LEVEL'], 'info'),
    logRetentionDays: parseInteger('CASHCODE_LOG_RETENTION_DAYS', env['CASHCODE_LOG_RETENTION_DAYS'], 10, 1, 3650),
    dreamIntervalSec: parseInteger('DREAM_INTERVAL', env['DREAM_INTERVAL'], 300, 0, 86_400 * 7),
    consolidationThresholdChars: int('CASHCODE_CONSOLIDATION_THRESHOLD', 40_000, 1_000, 10_000_000),
    modelTitles: parseBoolean('CASHCODE_MODEL_TITLES', env['CASHCODE_MODEL_TITLES'], true),
    backgroundModelTimeoutMs: int('CASHCODE_BACKGROUND_MODEL_TIMEOUT_MS', 120_000, 100, 3_600_000),
    usageRetentionDays: parseInteger('CASHCODE_USAGE_RETENTION_DAYS', env['CASHCODE_USAGE_RETENTION_DAYS'], 400, 1, 3650),
    usageDefaultMaxOutputTokens: int('CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS', 4096, 1, 10_000_000),
    maxIterations: parseInteger('CASHCODE_MAX_ITERATIONS', env['CASHCODE_MAX_ITERATIONS'], 8, 1, 100),
    subagents: loadSubagentConfig(env),
    maxToolCallsPerTurn: parseInteger('CASHCODE_MAX_TOOL_CALLS', env['CASHCODE_MAX_TOOL_CALLS'], 50, 1, 1000),
    toolRepeatLimit: parseInteger('CASHCODE_TOOL_REPEAT_LIMIT', env['CASHCODE_TOOL_REPEAT_LIMIT'], 3, 2, 100),
    attachmentMaxBytes: parseInteger('CASHCODE_ATTACHMENT_MAX_BYTES', env['CASHCODE_ATTACHMENT_MAX_BYTES'], 10 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    attachmentMaxRequestBytes: int('CASHCODE_ATTACHMENT_MAX_REQUEST_BYTES', 25 * 1024 * 1024, 1, 4 * 1024 * 1024 * 1024),
    attachmentMaxFiles: parseInteger('CASHCODE_ATTACHMENT_MAX_FILES', env['CASHCODE_ATTACHMENT_MAX_FILES'], 10, 1, 100),
    llmMaxRetries: parseInteger('CASHCODE_LLM_MAX_RETRIES', env['CASHCODE_LLM_MAX_RETRIES'], 2, 0, 10),
    llmTimeoutMs: parseInteger('CASHCODE_LLM_TIMEOUT_MS', env['CASHCODE_LLM_TIMEOUT_MS'], 60_000, 100, 3_600_000),
    llmDiscoveryTimeoutMs: int('CASHCODE_LLM_DISCOVERY_TIMEOUT_MS', 15_000, 100, 600_000),
    execEnabled: parseBoolean('CASHCODE_EXEC_ENABLED', env['CASHCODE_EXEC_ENABLED'], true),
    execTimeoutMs: parseInteger('CASHCODE_EXEC_TIMEOUT_MS', env['CASHCODE_EXEC_TIMEOUT_MS'], 30_000, 100, 3_600_000),
    execSandbox: parseSandboxMode('CASHCODE_EXEC_SANDBOX', env['CASHCODE_EXEC_SANDBOX']),
    execNetwork: parseBoolean('CASHCODE_EXEC_NETWORK', env['CASHCODE_EXEC_NETWORK'], true),
    approvalTimeoutSec: parseInteger('CASHCODE_APPROVAL_TIMEOUT_SEC', env['CASHCODE_APPROVAL_TIMEOUT_SEC'], 600, 1, 86_400),
    automationMinIntervalSec: parseInteger('CASHCODE_AUTOMATION_MIN_INTERVAL_SEC', env['CASHCODE_AUTOMATION_MIN_INTERVAL_SEC'], 60, 1, 3_600),
    fetchAllowPrivate: parseBoolean('CASHCODE_FETCH_ALLOW_PRIVATE', env['CASHCODE_FETCH_ALLOW_PRIVATE'], false),
    browser: loadBrowserConfig(env),
    fetchMaxChars: parseInteger('CASHCODE_FETCH_MAX_CHARS', env['CASHCODE_FETCH_MAX_CHARS'], 3000, 100, 1_000_000),
    fetchTimeoutMs: parseInteger('CASHCODE_FETCH_TIMEOUT_MS', env['CASHCODE_FETCH_TIMEOUT_MS'], 15_000, 100, 600_000),
    fetchMaxBytes: parseInteger('CASHCODE_FETCH_MAX_BYTES', env['CASHCODE_FETCH_MAX_BYTES'], 2 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    searchTimeoutMs: parseInteger('CASHCODE_SEARCH_TIMEOUT_MS', env['CASHCODE_SEARCH_TIMEOUT_MS'], 10_000, 100, 600_000),
    grepTimeoutMs: parseInteger('CASHCODE_GREP_TIMEOUT_MS', env['CASHCODE_GREP_TIMEOUT_MS'], 10_000, 50, 600_000),
    execEnv: pickEnv(env, EXEC_ENV_ALLOWLIST),
    ...mcpCatalogFiles(env['CASHCODE_MCP_CATALOG'], rootDir),
    mcpUserCatalogPath: join(dataDir, 'mcp', 'servers.json'),
    mcpConnectionStatePath: join(dataDir, 'mcp', 'connections.json'),
    mcpCacheDir: join(dataDir, 'mcp_cache'),
    sessionIndexFile: join(dataDir, 'memory-index', 'sessions.sqlite'),
    mcpOAuthDir: join(dataDir, 'mcp', 'oauth'),
    publicUrl: parseUrl('CASHCODE_PUBLIC_URL', env['CASHCODE_PUBLIC_URL']),
    mcpConnectTimeoutMs: parseInteger('CASHCODE_MCP_CONNECT_TIMEOUT_MS', env['CASHCODE_MCP_CONNECT_TIMEOUT_MS'], 30_000, 100, 600_000),
    mcpToolTimeoutMs: parseInteger('CASHCODE_MCP_TOOL_TIMEOUT_MS', env['CASHCODE_MCP_TOOL_TIMEOUT_MS'], 30_000, 100, 3_600_000),
    toolOutputBudgetChars: parseInteger('CASHCODE_TOOL_OUTPUT_BUDGET_CHARS', env['CASHCODE_TOOL_OUTPUT_BUDGET_CHARS'], 8_000, 0, 10_000_000),
    contextKeepToolResultsTurns: int('CASHCODE_CONTEXT_KEEP_TOOL_RESULTS_TURNS', 3, 0, 100_000),
    searxngUrl: parseUrl('CASHCODE_SEARXNG_URL', env['CASHCODE_SEARXNG_URL']),
    telegramApiRoot: parseUrl('CASHCODE_TELEGRAM_API_ROOT', env['CASHCODE_TELEGRAM_API_ROOT']) ?? 'https://api.telegram.org',
    skillsBuiltinDir: join(rootDir, 'apps', 'api', 'src', 'skills', 'builtin'),
    skillsUserDir: join(dataDir, 'skills', 'user'),
    skillsAgentDir: join(dataDir, 'skills', 'agent'),
    skillSnapshotsDir: join(dataDir, 'skill-snapshots'),
    skillBinPath: env['PATH'] ?? '',
    presentEnvNames: Object.keys(env).filter((key) => typeof env[key] === 'string' && env[key] !== ''),
    legacyDeepseekApiKey: env['DEEPSEEK_API_KEY']?.trim() || null,
    legacyDeepseekApiBase: env['DEEPSEEK_API_BASE']?.trim() || null,
    skillEvolutionEnabled: parseEnableFlag(env['SKILL_EVOLUTION_ENABLED']),
    skillEvolutionMinToolCalls: parseAtLeast('SKILL_EVOLUTION_MIN_TOOL_CALLS', env['SKILL_EVOLUTION_MIN_TOOL_CALLS'], 2, 1, 1000),
    skillEvolutionRecurrence: parseAtLeast('SKILL_EVOLUTION_RECURRENCE', env['SKILL_EVOLUTION_RECURRENCE'], 2, 2, 1000),
    skillEvolutionMaxContextChars: parseAtLeast(
      'SKILL_EVOLUTION_MAX_CONTEXT_CHARS',
      env['SKILL_EVOLUTION_MAX_CONTEXT_CHARS'],
      12_000,
      1_000,
      1_000_000,
    ),
    skillEvolutionMaxConcurrent: parseAtLeast('SKILL_EVOLUTION_MAX_CONCURRENT', env['SKILL_EVOLUTION_MAX_CONCURRENT'], 1, 1, 64),
    skillEvolutionMaxEvidence: parseAtLeast('SKILL_EVOLUTION_MAX_EVIDENCE', env['SKILL_EVOLUTION_MAX_EVIDENCE'], 500, 10, 100_000),
    skillEvolutionDir: join(dataDir, 'skill-evolution'),
  };
}

/**
 * CASHCODE_MCP_CATALOG: unset → the shipped catalog; `a.json:b.json` → those files instead (in order); `+a.json` → the
 * shipped catalog, then those files. `mcpCatalogPath` is the first file.
 */
export function mcpCatalogFiles(raw: string | undefined, rootDir: string): { mcpCatalogPath: string; mcpCatalogPaths: string[] } {
  const abs = (value: string, base: string) => (isAbsolute(value) ? value : resolve(base, value));
  const shipped = abs(join('mcp_servers', 'mcp_config.json'), rootDir);
  let text = raw?.trim() ?? '';
  const keepShipped = text.startsWith('+');
  if (keepShipped) text = text.slice(1).trim();
  const files = text
    .split(delimiter)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => abs(part, rootDir));
  const paths = keepShipped || files.length === 0 ? [shipped, ...files] : files;
  return { mcpCatalogPath: paths[0]!, mcpCatalogPaths: paths };
}
