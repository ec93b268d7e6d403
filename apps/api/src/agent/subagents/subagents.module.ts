import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { MemoryModule } from '../../memory/memory.module';
import { AgentModule } from '../agent.module';
import { AgentRunner } from '../agent-runner';
import { ToolRegistry } from '../tool-registry';
import { DelegateTool } from './delegate.tool';
import { SubagentRuns } from './subagent-runs';
import { SubagentsController } from './subagents.controller';

/**
 * Sub-agents (openspec subagents): registers the `delegate` tool in the agent's ToolRegistry (unless
 * CASHCODE_SUBAGENT_MAX_DEPTH=0) and serves the children's transcripts. Children run on the agent's own AgentRunner.
 */
@Module({
  imports: [AgentModule, MemoryModule],
  providers: [SubagentRuns],
  controllers: [SubagentsController],
})
export class SubagentsModule implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: ToolRegistry,
    private readonly runner: AgentRunner,
    private readonly runs: SubagentRuns,
  ) {}

  onModuleInit(): void {
    if (this.config.subagents.maxDepth > 0) this.registry.register(new DelegateTool(this.config, this.runner, this.runs, this.registry));
  }
}
