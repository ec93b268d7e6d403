import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ChatModule } from '../chat/chat.module';
import { McpModule } from '../mcp/mcp.module';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/**
 * Operator metrics (openspec metrics): `GET /metrics` in the Prometheus format. An observer on top of every layer: it
 * reads the chat's event stream, the gateway's connection count, the MCP states and the tool registry, and listens to
 * `model_call.recorded`; no module imports it.
 */
@Module({
  imports: [AgentModule, ChatModule, McpModule],
  controllers: [MetricsController],
  providers: [MetricsService],
})
export class MetricsModule {}
