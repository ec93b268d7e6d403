import { Injectable, inject, signal } from '@angular/core';
import type { McpServerRecord, SkillRecord } from '@cashcode/contracts';

import { errorMessage } from '../../core/api/api-error';
import { McpApi } from '../../mcp-market/mcp-api';
import { SkillsApi } from '../../skill-market/skills-api';
import type { CapabilityItem, CapabilityKind } from './capability-rules';

export type CatalogStatus = 'idle' | 'loading' | 'loaded' | 'failed';

export interface CatalogList {
  status: CatalogStatus;
  items: CapabilityItem[];
  error: string | null;
}

const IDLE: CatalogList = { status: 'idle', items: [], error: null };

/** The picker's Skill list query (openspec console): enabled and available Skills, one page of 200. */
export const PICKER_SKILL_QUERY = { enabled: true, availability: 'available', page_size: 200 } as const;

export function skillItems(records: readonly SkillRecord[]): CapabilityItem[] {
  return records
    .filter((skill) => skill.enabled && skill.availability === 'available')
    .map((skill) => ({
      kind: 'skill',
      name: skill.name,
      displayName: skill.display_name || skill.name,
      description: skill.description,
      toolCount: null,
    }));
}

/** Connected servers that report tools; the tools call then decides (at least one callable tool). */
export function connectedServers(records: readonly McpServerRecord[]): McpServerRecord[] {
  return records.filter((server) => server.connected && server.status === 'connected' && server.tool_count > 0);
}

/**
 * What the `@` picker offers (openspec console): enabled, available Skills and connected MCP servers with at least one
 * callable tool. Each list is fetched again whenever the picker opens it; a late answer of an earlier fetch is dropped.
 */
@Injectable({ providedIn: 'root' })
export class CapabilityCatalog {
  private readonly skillsApi = inject(SkillsApi);
  private readonly mcpApi = inject(McpApi);
  private readonly lists = {
    skill: signal<CatalogList>(IDLE),
    mcp: signal<CatalogList>(IDLE),
  } as const;
  private readonly sequence: Record<CapabilityKind, number> = { skill: 0, mcp: 0 };

  readonly skills = this.lists.skill.asReadonly();
  readonly mcp = this.lists.mcp.asReadonly();

  async load(kind: CapabilityKind): Promise<void> {
    const token = ++this.sequence[kind];
    const list = this.lists[kind];
    list.set({ status: 'loading', items: [], error: null });
    try {
      const items = kind === 'skill' ? await this.fetchSkills() : await this.fetchServers();
      if (token === this.sequence[kind]) list.set({ status: 'loaded', items, error: null });
    } catch (error) {
      if (token === this.sequence[kind]) list.set({ status: 'failed', items: [], error: errorMessage(error) });
    }
  }

  private async fetchSkills(): Promise<CapabilityItem[]> {
    const response = await this.skillsApi.list(PICKER_SKILL_QUERY);
    return skillItems(response.items);
  }

  private async fetchServers(): Promise<CapabilityItem[]> {
    const servers = connectedServers(await this.mcpApi.list());
    const rows = await Promise.all(
      servers.map(async (server): Promise<CapabilityItem | null> => {
        const tools = await this.mcpApi.tools(server.name);
        const callable = tools.tools.filter((tool) => tool.callable).length;
        if (callable === 0) return null;
        return {
          kind: 'mcp',
          name: server.name,
          displayName: server.display_name || server.name,
          description: server.description,
          toolCount: callable,
        };
      }),
    );
    return rows.filter((row): row is CapabilityItem => row !== null);
  }
}
