import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { MemoryModule } from '../memory/memory.module';
import { McpActivations } from './mcp-activations';
import { McpCatalog } from './mcp-catalog';
import { McpController, McpOAuthCallbackController } from './mcp.controller';
import { McpSchemaCache } from './mcp-schema-cache';
import { McpService } from './mcp.service';
import { McpOAuth } from './oauth/mcp-oauth';
import { defaultTransportFactory, MCP_TRANSPORT_FACTORY } from './mcp-transports';

/**
 * MCP: catalog (built-in + user), connections (stdio / SSE / Streamable HTTP), tool wrappers registered in the
 * agent's ToolRegistry, schema cache, tool_search + mcp_prepare, per-chat activation sets, REST.
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
    McpService,
    McpOAuth,
    { provide: MCP_TRANSPORT_FACTORY, useValue: defaultTransportFactory },
  ],
  exports: [McpService],
})
export class McpModule {}
