import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, type AppConfig } from './app-config';

/** loadConfig reads only the env object it is given; the root is a real temp dir. */
describe('loadConfig', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cashcode-config-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const load = (env: Record<string, string> = {}): AppConfig => loadConfig({ XDG_CONFIG_HOME: join(root, 'xdg'), ...env }, root);
  const failure = (env: Record<string, string>): string => {
    try {
      load(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('Scenario: an empty environment gives the documented defaults, paths under the root', () => {
    const config = load({ PATH: '/usr/bin', LANG: 'C.UTF-8', SECRET_TOKEN: 'x' });
    expect(config).toMatchObject({
      rootDir: root,
      host: '127.0.0.1',
      port: 8000,
      wsHost: '127.0.0.1',
      wsPort: 8765,
      wsSharesHttp: false,
      dataDir: join(root, 'data'),
      memoryDir: join(root, 'data', 'memory'),
      workspaceDir: join(root, 'data', 'workspace'),
      logDir: join(root, 'data', 'logs'),
      configDir: process.platform === 'linux' ? join(root, 'xdg', 'cashcode') : expect.any(String),
      consoleDir: join(root, 'apps', 'console', 'dist', 'console', 'browser'),
      allowedOrigins: ['http://127.0.0.1:8000', 'http://localhost:8000'],
      allowedHosts: [],
      trustedProxies: [],
      consoleDev: false,
      apiToken: null,
      authEnabled: true,
      fileLogLevel: 'debug',
      consoleLogLevel: 'info',
      logRetentionDays: 10,
      dreamIntervalSec: 300,
      consolidationThresholdChars: 40_000,
      maxIterations: 8,
      subagents: { maxDepth: 1, concurrency: 3, maxIterations: 8, maxTokens: 200_000 },
      usageRetentionDays: 400,
      usageDefaultMaxOutputTokens: 4096,
      attachmentMaxBytes: 10 * 1024 * 1024,
      attachmentMaxRequestBytes: 25 * 1024 * 1024,
      attachmentMaxFiles: 10,
      llmMaxRetries: 2,
      llmTimeoutMs: 60_000,
      execEnabled: true,
      execTimeoutMs: 30_000,
      execSandbox: 'auto',
      execNetwork: true,
      approvalTimeoutSec: 600,
      automationMinIntervalSec: 60,
      fetchAllowPrivate: false,
      fetchMaxChars: 3000,
      searxngUrl: null,
      mcpCatalogPath: join(root, 'mcp_servers', 'mcp_config.json'),
      mcpCatalogPaths: [join(root, 'mcp_servers', 'mcp_config.json')],
      mcpConnectionStatePath: join(root, 'data', 'mcp', 'connections.json'),
      mcpUserCatalogPath: join(root, 'data', 'mcp', 'servers.json'),
      skillsBuiltinDir: join(root, 'apps', 'api', 'src', 'skills', 'builtin'),
      skillsUserDir: join(root, 'data', 'skills', 'user'),
      skillsAgentDir: join(root, 'data', 'skills', 'agent'),
      skillSnapshotsDir: join(root, 'data', 'skill-snapshots'),
      skillBinPath: '/usr/bin',
      legacyDeepseekApiKey: null,
      skillEvolutionEnabled: false,
      skillEvolutionMinToolCalls: 2,
      skillEvolutionRecurrence: 2,
      skillEvolutionMaxConcurrent: 1,
    });
    // exec inherits only the allow-listed variables
    expect(config.execEnv).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8' });
    expect(config.presentEnvNames).toEqual(expect.arrayContaining(['PATH', 'LANG', 'SECRET_TOKEN']));
  });

  it('Scenario: values are trimmed and parsed; relative directories resolve against the root', () => {
    const config = load({
      CASHCODE_PORT: ' 9000 ',
      WS_PORT: '9000',
      CASHCODE_DATA_DIR: 'var/data',
      MEMORY_DIR: '/abs/memory',
      CASHCODE_CONSOLE_DEV: 'yes',
      CASHCODE_ALLOWED_ORIGINS: 'https://a.example/, https://a.example,,',
      CASHCODE_ALLOWED_HOSTS: 'My.Host',
      CASHCODE_TRUSTED_PROXIES: 'loopback, 10.0.0.1, ::ffff:192.168.0.0/112',
      CASHCODE_FILE_LOG_LEVEL: 'warning',
      CASHCODE_EXEC_SANDBOX: 'OFF',
      CASHCODE_EXEC_ENABLED: 'off',
      CASHCODE_SEARXNG_URL: 'https://search.example/',
      SKILL_EVOLUTION_ENABLED: 'TRUE',
      SKILL_EVOLUTION_RECURRENCE: '1',
      SKILL_EVOLUTION_MAX_CONCURRENT: '999',
    });
    expect(config.port).toBe(9000);
    expect(config.wsSharesHttp).toBe(true);
    expect(config.dataDir).toBe(join(root, 'var', 'data'));
    expect(config.memoryDir).toBe('/abs/memory');
    expect(config.allowedOrigins).toEqual([
      'http://127.0.0.1:9000',
      'http://localhost:9000',
      'http://127.0.0.1:4200',
      'http://localhost:4200',
      'https://a.example',
    ]);
    expect(config.allowedHosts).toEqual(['my.host']);
    expect(config.trustedProxies).toEqual(['127.0.0.0/8', '::1/128', '10.0.0.1/32', '192.168.0.0/16']);
    expect(config.fileLogLevel).toBe('warn');
    expect(config.execSandbox).toBe('off');
    expect(config.execEnabled).toBe(false);
    expect(config.searxngUrl).toBe('https://search.example');
    expect(config.skillEvolutionEnabled).toBe(true);
    // floors and ceilings of the "at least" settings
    expect(config.skillEvolutionRecurrence).toBe(2);
    expect(config.skillEvolutionMaxConcurrent).toBe(64);
  });

  it('Scenario: a non-loopback bind needs a token of at least 16 characters', () => {
    expect(failure({ CASHCODE_HOST: '0.0.0.0' })).toBe(
      'CASHCODE_HOST=0.0.0.0 is not a loopback address: set CASHCODE_API_TOKEN to bind it',
    );
    expect(failure({ WS_HOST: '192.168.1.2' })).toBe(
      'WS_HOST=192.168.1.2 is not a loopback address: set CASHCODE_API_TOKEN to bind it',
    );
    expect(failure({ CASHCODE_API_TOKEN: 'short' })).toBe('CASHCODE_API_TOKEN must be at least 16 characters long');
    const config = load({ CASHCODE_HOST: '0.0.0.0', CASHCODE_API_TOKEN: '0123456789abcdef' });
    expect(config.apiToken).toBe('0123456789abcdef');
    expect(config.wsHost).toBe('0.0.0.0');
    expect(load({ CASHCODE_HOST: 'localhost' }).host).toBe('localhost');
  });

  it('Scenario: CASHCODE_AUTH=off is explicit and refused beyond loopback', () => {
    expect(load({}).authEnabled).toBe(true);
    expect(load({ CASHCODE_AUTH: 'ON' }).authEnabled).toBe(true);
    expect(load({ CASHCODE_AUTH: ' off ' }).authEnabled).toBe(false);
    expect(failure({ CASHCODE_AUTH: 'no' })).toBe('CASHCODE_AUTH must be on or off, got "no"');
    expect(failure({ CASHCODE_AUTH: 'off', CASHCODE_HOST: '0.0.0.0' })).toBe(
      'CASHCODE_AUTH=off is refused with CASHCODE_HOST=0.0.0.0: it is only allowed on a loopback address',
    );
    expect(failure({ CASHCODE_AUTH: 'off', WS_HOST: '192.168.1.2' })).toBe(
      'CASHCODE_AUTH=off is refused with WS_HOST=192.168.1.2: it is only allowed on a loopback address',
    );
    expect(failure({ CASHCODE_AUTH: 'off', CASHCODE_API_TOKEN: '0123456789abcdef' })).toBe(
      'CASHCODE_AUTH=off cannot be combined with CASHCODE_API_TOKEN: unset one of them',
    );
  });

  it.each([
    [{ CASHCODE_PORT: 'http' }, 'CASHCODE_PORT must be an integer port number (0-65535), got "http"'],
    [{ CASHCODE_PORT: '-1' }, 'CASHCODE_PORT must be an integer port number (0-65535), got "-1"'],
    [{ WS_PORT: '70000' }, 'WS_PORT must be between 0 and 65535, got 70000'],
    [{ CASHCODE_HOST: 'bad host!' }, 'CASHCODE_HOST is not a valid host: "bad host!"'],
    [{ WS_HOST: 'a_b' }, 'WS_HOST is not a valid host: "a_b"'],
    [{ CASHCODE_MAX_ITERATIONS: '1.5' }, 'CASHCODE_MAX_ITERATIONS must be an integer, got "1.5"'],
    [{ CASHCODE_MAX_ITERATIONS: '0' }, 'CASHCODE_MAX_ITERATIONS must be between 1 and 100, got 0'],
    [{ CASHCODE_LOG_RETENTION_DAYS: '9999' }, 'CASHCODE_LOG_RETENTION_DAYS must be between 1 and 3650, got 9999'],
    [{ CASHCODE_USAGE_RETENTION_DAYS: '0' }, 'CASHCODE_USAGE_RETENTION_DAYS must be between 1 and 3650, got 0'],
    [{ CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS: 'lots' }, 'CASHCODE_USAGE_DEFAULT_MAX_OUTPUT_TOKENS must be an integer, got "lots"'],
    [{ CASHCODE_EXEC_NETWORK: 'maybe' }, 'CASHCODE_EXEC_NETWORK must be true or false, got "maybe"'],
    [{ CASHCODE_CONSOLE_DEV: '2' }, 'CASHCODE_CONSOLE_DEV must be true or false, got "2"'],
    [
      { CASHCODE_CONSOLE_LOG_LEVEL: 'loud' },
      'CASHCODE_CONSOLE_LOG_LEVEL must be one of ERROR, WARNING, INFO, DEBUG, got "loud"',
    ],
    [{ CASHCODE_EXEC_SANDBOX: 'docker' }, 'CASHCODE_EXEC_SANDBOX must be one of auto, bwrap, off, got "docker"'],
    [{ CASHCODE_SEARXNG_URL: 'ftp://x.example' }, 'CASHCODE_SEARXNG_URL must be an http or https URL'],
    [{ CASHCODE_SEARXNG_URL: 'not a url' }, 'CASHCODE_SEARXNG_URL must be an http or https URL'],
    [
      { CASHCODE_TRUSTED_PROXIES: '10.0.0.0/33' },
      'CASHCODE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. 10.0.0.1, 10.0.0.0/8, fd00::/8, loopback), got "10.0.0.0/33"',
    ],
    [
      { CASHCODE_TRUSTED_PROXIES: 'proxy.example' },
      'CASHCODE_TRUSTED_PROXIES must list IP addresses or CIDR ranges (e.g. 10.0.0.1, 10.0.0.0/8, fd00::/8, loopback), got "proxy.example"',
    ],
    [{ SKILL_EVOLUTION_MIN_TOOL_CALLS: 'two' }, 'SKILL_EVOLUTION_MIN_TOOL_CALLS must be an integer, got "two"'],
  ])('Scenario: a bad value is a readable ConfigError (%o)', (env, message) => {
    expect(failure(env)).toBe(message);
  });
});
