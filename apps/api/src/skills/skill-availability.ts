/**
 * Availability of a Skill (openspec skills): an enabled package is `available` when every requirement it declares is
 * present — `bin:` an executable file on the server's PATH, `env:` a set environment variable, `tool:` a registered
 * tool (meta tools such as `tool_search` count; `mcp__…` names are the MCP servers' business), `mcp:` a configured
 * MCP server — else `missing_dependency` with the missing ones listed; a disabled package is `disabled`.
 */
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SkillAvailability } from '@cashcode/contracts';
import { MCP_TOOL_PREFIX } from '../agent/tool-registry';
import type { LoadedPackage } from './skill-package-reader';

/** What availability needs from the rest of the server. */
export interface AvailabilityProbe {
  /** the tool is registered (main registry or meta tools) */
  hasTool(name: string): boolean;
  /** the MCP server is in the catalog */
  mcpServerConfigured(name: string): boolean;
}

/** What availability needs from the server's environment. */
export interface AvailabilityEnv {
  /** the PATH searched for `bin:` requirements */
  binPath: string;
  /** the names of the set environment variables */
  envNames: ReadonlySet<string>;
}

/** `bin:` lookups of one pass, shared by the packages that need the same program. */
export type BinLookups = Map<string, Promise<boolean>>;

export class AvailabilityCheck {
  constructor(
    private readonly probe: AvailabilityProbe,
    private readonly env: AvailabilityEnv,
  ) {}

  /** The availability of one package and what it misses. */
  async of(pkg: LoadedPackage, bins: BinLookups = new Map()): Promise<{ availability: SkillAvailability; missing: string[] }> {
    if (!pkg.enabled) return { availability: 'disabled', missing: [] };
    const missing: string[] = [];
    const requires = pkg.manifest.requires;
    for (const bin of requires.bins) {
      let found = bins.get(bin);
      if (!found) {
        found = this.binOnPath(bin);
        bins.set(bin, found);
      }
      if (!(await found)) missing.push(`bin:${bin}`);
    }
    for (const variable of requires.env) if (!this.env.envNames.has(variable)) missing.push(`env:${variable}`);
    for (const tool of requires.tools) {
      if (!tool.startsWith(MCP_TOOL_PREFIX) && !this.probe.hasTool(tool)) missing.push(`tool:${tool}`);
    }
    for (const server of requires.mcp_servers) if (!this.probe.mcpServerConfigured(server)) missing.push(`mcp:${server}`);
    return { availability: missing.length > 0 ? 'missing_dependency' : 'available', missing };
  }

  private async binOnPath(bin: string): Promise<boolean> {
    if (bin.includes('/') || bin.includes('\\') || bin.includes('\0')) return false;
    const dirs = this.env.binPath.split(path.delimiter).filter((dir) => dir !== '' && path.isAbsolute(dir));
    for (const dir of dirs) {
      const candidate = path.join(dir, bin);
      try {
        const stat = await fs.stat(candidate);
        if (!stat.isFile()) continue;
        await fs.access(candidate, fsConstants.X_OK);
        return true;
      } catch {
        // next directory
      }
    }
    return false;
  }
}
