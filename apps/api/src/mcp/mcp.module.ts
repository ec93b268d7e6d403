import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { MemoryModule } from '../memory/memory.module';
import { McpActivations } from './mcp-activations';
import { McpCatalog } from './mcp-catalog';
import { McpController, McpOAuthCallbackController } from './mcp.controller';
import { McpConnections } from './mcp-connections';
import { McpSchemaCache } from './mcp-schema-cache';
import { McpServers } from './mcp-servers';
import { McpService } from './mcp.service';
import { McpSignIn } from './mcp-sign-in';
import { McpTurnPreparation } from './mcp-turn-preparation';
import { McpOAuth } from './oauth/mcp-oauth';
import { defaultTransportFactory, MCP_TRANSPORT_FACTORY } from './mcp-transports';

/**
 * MCP: catalog (built-in + user) and its REST (McpServers), connections (stdio / SSE / Streamable HTTP) with the tool
 * wrappers registered in the agent's ToolRegistry (McpConnections), OAuth sign-in (McpSignIn), schema cache,
 * tool_search + mcp_prepare and the per-chat activation sets (McpTurnPreparation). Other modules use McpService.
 * Depends on AgentModule (registers tools) and MemoryModule (activation sets live in metadata.json); nothing in
 * agent/ or chat/ imports this module.
 */
@Module({
  imports: [AgentModule, MemoryModule],
  controllers: [McpController, McpOAuthCallbackController],
  providers: [
    McpCatalog,
    McpSchemaCache,
    McpActivations,
    McpConnections,
    McpServers,
    McpSignIn,
    McpTurnPreparation,
    McpService,
    McpOAuth,
    { provide: MCP_TRANSPORT_FACTORY, useValue: defaultTransportFactory },
  ],
  exports: [McpService],
})
export class McpModule {}
