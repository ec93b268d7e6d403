/**
 * The built-in tools (openspec builtin-tools) except `save_memory` (which needs the memory store and is registered by
 * the agent module itself): web_fetch, web_search, read_file, write_file, edit_file, list_dir, glob, grep and — unless
 * CASHCODE_EXEC_ENABLED=false — exec. The workspace directory is created here (at start).
 */
import * as path from 'node:path';
import { Logger, type LoggerService } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import type { AgentTool } from '../agent-tool';
import type { ExecSandbox } from '../sandbox/exec-sandbox';
import { EditFileTool } from './edit-file.tool';
import { buildExecEnvironment } from './exec-process';
import { ExecTool } from './exec.tool';
import { GlobTool } from './glob.tool';
import { DEFAULT_GREP_LIMITS, GrepTool } from './grep.tool';
import { ListDirTool } from './list-dir.tool';
import { ReadFileTool } from './read-file.tool';
import { SsrfGuard, type HostResolver } from './ssrf-guard';
import { WebFetchTool } from './web-fetch.tool';
import { DUCKDUCKGO_API_URL, WebSearchTool } from './web-search.tool';
import { WorkspacePaths } from './workspace-paths';
import { WriteFileTool } from './write-file.tool';

export interface BuiltinToolDeps {
  config: AppConfig;
  logger?: LoggerService;
  /** DNS for web_fetch (tests inject one); defaults to the system resolver */
  resolver?: HostResolver;
  /** roots write_file / edit_file refuse (openspec skills); default: every Skill root and the snapshots */
  skillRoots?: string[];
  /** DuckDuckGo Instant Answer endpoint; tests point it at a local server */
  duckDuckGoUrl?: string;
  /** host names web_fetch does not address-check (tests only) */
  trustedFetchHosts?: string[];
  /** how exec starts commands (the server's ExecSandboxService); default: unconfined */
  sandbox?: ExecSandbox;
}

export const EXEC_KILL_GRACE_MS = 2000;
export const EXEC_MAX_CAPTURE_BYTES = 1024 * 1024;
export const WEB_FETCH_MAX_REDIRECTS = 5;

export function createBuiltinTools(deps: BuiltinToolDeps): AgentTool[] {
  const { config } = deps;
  const logger = deps.logger ?? new Logger('BuiltinTools');
  // every Skill root (built-in too, in case the workspace contains it) and the snapshots are write-protected (openspec
  // skills)
  const skillRoots = deps.skillRoots ?? [
    path.join(config.dataDir, 'skills'),
    config.skillsUserDir,
    config.skillsAgentDir,
    config.skillsBuiltinDir,
    config.skillSnapshotsDir,
  ];
  // what decides the model's permissions is never the model's to write, wherever the workspace points: tool policies,
  // rules, Skill grants and the audit, the MCP catalogs and OAuth tokens, the settings and keys of the config dir, the
  // automations (what runs unattended, with which tools), the channels' pairings (an approved private sender is the
  // owner) and conversations, the usage ledger (what the spend limits count) and the Skill-evolution proposals (what the
  // owner reviews is what is applied); MEMORY.md, SOUL.md and the provenance log too: memory is
  // written through save_memory (and its asks) only
  const stateRoots = [
    path.join(config.dataDir, 'approvals'),
    path.join(config.dataDir, 'mcp'),
    path.join(config.dataDir, 'automations'),
    path.join(config.dataDir, 'channels'),
    path.join(config.dataDir, 'usage'),
    config.skillEvolutionDir,
    config.configDir,
    config.memoryDir,
    ...config.mcpCatalogPaths,
  ];
  const workspace = new WorkspacePaths(config.workspaceDir, skillRoots, stateRoots);
  const guard = new SsrfGuard({
    allowPrivate: config.fetchAllowPrivate,
    resolver: deps.resolver,
    trustedHosts: deps.trustedFetchHosts,
  });
  const tools: AgentTool[] = [
    new WebFetchTool({
      guard,
      timeoutMs: config.fetchTimeoutMs,
      maxBytes: config.fetchMaxBytes,
      maxChars: config.fetchMaxChars,
      maxRedirects: WEB_FETCH_MAX_REDIRECTS,
    }),
    new WebSearchTool({
      duckDuckGoUrl: deps.duckDuckGoUrl ?? DUCKDUCKGO_API_URL,
      searxngUrl: config.searxngUrl,
      timeoutMs: config.searchTimeoutMs,
    }),
    new ReadFileTool(workspace),
    new WriteFileTool(workspace),
    new EditFileTool(workspace),
    new ListDirTool(workspace),
    new GlobTool(workspace),
    new GrepTool(workspace, { ...DEFAULT_GREP_LIMITS, timeoutMs: config.grepTimeoutMs }),
  ];
  if (config.execEnabled) {
    tools.push(
      new ExecTool(workspace, {
        timeoutMs: config.execTimeoutMs,
        killGraceMs: EXEC_KILL_GRACE_MS,
        maxCaptureBytes: EXEC_MAX_CAPTURE_BYTES,
        env: buildExecEnvironment(config.execEnv, workspace.root),
        sandbox: deps.sandbox,
      }),
    );
  }
  if (config.fetchAllowPrivate) {
    logger.warn('event=web_fetch_private_allowed detail="CASHCODE_FETCH_ALLOW_PRIVATE=true: web_fetch may reach private addresses"');
  }
  // start-up bookkeeping: DEBUG, so the first INFO lines are the start-up banner
  logger.debug?.(
    `event=builtin_tools_ready tools=${tools.map((tool) => tool.name).join(',')} exec=${config.execEnabled ? 'on' : 'off'}` +
      ` search=${config.searxngUrl ? 'searxng' : 'duckduckgo'}`,
  );
  return tools;
}
