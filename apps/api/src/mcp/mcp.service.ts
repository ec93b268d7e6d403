/**
 * The MCP module's entry point for the other modules: the server list and connection states (skills' `mcp:`
 * requirements, metrics), a turn's preparation (chat) and `mcp_prepare` for a Skill's servers (skills). It only
 * delegates: the catalog REST is McpServers (mcp-servers.ts), the connections and tool wrappers McpConnections
 * (mcp-connections.ts), the OAuth sign-in McpSignIn (mcp-sign-in.ts), the per-turn view McpTurnPreparation
 * (mcp-turn-preparation.ts).
 */
import { Injectable } from '@nestjs/common';
import type { McpServerRecord, McpServerStatus } from '@cashcode/contracts';
import { McpConnections } from './mcp-connections';
import { McpServers } from './mcp-servers';
import { McpTurnPreparation } from './mcp-turn-preparation';

@Injectable()
export class McpService {
  constructor(
    private readonly servers: McpServers,
    private readonly connections: McpConnections,
    private readonly turns: McpTurnPreparation,
  ) {}

  /** Every catalog server's record (built-in and user, sorted by name). */
  list(): McpServerRecord[] {
    return this.servers.list();
  }

  /** How many catalog servers are in each connection state (read by the metrics endpoint on every scrape). */
  statusCounts(): Map<McpServerStatus, number> {
    return this.servers.statusCounts();
  }

  /** Loads the chat's activation set and connects the selected servers; their wrapper names (McpTurnPreparation). */
  prepareTurn(chatId: string, selectedServers: readonly string[], signal?: AbortSignal, text?: string): Promise<Set<string>> {
    return this.turns.prepareTurn(chatId, selectedServers, signal, text);
  }

  /** Connects the selected servers and returns their wrapper names; rejects with the spec's message when one cannot be used. */
  prepareSelectedConnectors(selectedServers: readonly string[], signal?: AbortSignal): Promise<string[]> {
    return this.turns.prepareSelectedConnectors(selectedServers, signal);
  }

  /** `mcp_prepare`: connects a server and activates its tools in the chat; the model-facing outcome. */
  prepareServer(chatId: string, serverName: string, signal: AbortSignal): Promise<string> {
    return this.turns.prepareServer(chatId, serverName, signal);
  }

  /** Wrapper names of a connected server's tools (empty when not connected). */
  serverToolNames(name: string): string[] {
    return [...this.connections.wrappers(name)];
  }
}
