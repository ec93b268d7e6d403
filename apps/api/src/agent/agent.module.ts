import { Inject, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { MemoryModule } from '../memory/memory.module';
import { MemoryStore } from '../memory/memory-store';
import { SessionIndex } from '../memory/session-index';
import type { AgentTool } from './agent-tool';
import { AgentRunner } from './agent-runner';
import { ExecSandboxService } from './sandbox/exec-sandbox.service';
import { SandboxModule } from './sandbox/sandbox.module';
import { SystemPromptBuilder } from './system-prompt';
import { ToolRegistry } from './tool-registry';
import { createBuiltinTools } from './tools/builtin-tools';
import { SaveMemoryTool } from './tools/save-memory.tool';
import { SessionSearchTool } from './tools/session-search.tool';

/** What a built-in tool factory may use. */
export interface AgentToolFactoryDeps {
  config: AppConfig;
  memory: MemoryStore;
  sessionIndex: SessionIndex;
  sandbox: ExecSandboxService;
}

export type BuiltinToolFactory = (deps: AgentToolFactoryDeps) => AgentTool[];

/**
 * The built-in tools registered in the main registry at start (spec §7, §8 main registry): save_memory and the
 * file/web/exec tools. Tests replace one by registering a tool with the same name.
 */
export const BUILTIN_TOOL_FACTORIES: readonly BuiltinToolFactory[] = [
  ({ memory }) => [new SaveMemoryTool(memory)],
  ({ sessionIndex }) => [new SessionSearchTool(sessionIndex)],
  ({ config, sandbox }) => createBuiltinTools({ config, sandbox }),
];

/**
 * The agent: tool registry (+ deferred view), the streaming ReAct runner and the system prompt builder. Other
 * modules register their tools (MCP wrappers, skill tools) in ToolRegistry.
 */
@Module({
  imports: [MemoryModule, SandboxModule],
  providers: [ToolRegistry, AgentRunner, SystemPromptBuilder],
  exports: [ToolRegistry, AgentRunner, SystemPromptBuilder],
})
export class AgentModule implements OnModuleInit {
  private readonly logger = new Logger(AgentModule.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly memory: MemoryStore,
    private readonly registry: ToolRegistry,
    private readonly sessionIndex: SessionIndex,
    private readonly sandbox: ExecSandboxService,
  ) {}

  onModuleInit(): void {
    const deps: AgentToolFactoryDeps = {
      config: this.config,
      memory: this.memory,
      sessionIndex: this.sessionIndex,
      sandbox: this.sandbox,
    };
    for (const factory of BUILTIN_TOOL_FACTORIES) {
      for (const tool of factory(deps)) this.registry.register(tool);
    }
    this.logger.log(formatEvent('agent.tools.registered', { tools: this.registry.names().join(',') }));
  }
}
