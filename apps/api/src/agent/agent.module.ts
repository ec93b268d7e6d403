import { Inject, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { ModelGatewayRouter } from '../llm-settings/model-gateway-router';
import { MemoryModule } from '../memory/memory.module';
import { ArtifactStore } from '../memory/artifact.store';
import { HistoryLogStore } from '../memory/history-log.store';
import { MemoryDocuments } from '../memory/memory-documents';
import { SessionIndex } from '../memory/session-index';
import type { AgentTool } from './agent-tool';
import { AgentRunner } from './agent-runner';
import { HISTORY_LOG, type HistoryLog } from './history-log';
import { MODEL_GATEWAY, type ModelGateway } from './model-gateway';
import { ToolExecutor } from './tool-executor';
import { ExecSandboxService } from './sandbox/exec-sandbox.service';
import { SandboxModule } from './sandbox/sandbox.module';
import { SystemPromptBuilder } from './system-prompt';
import { ToolRegistry } from './tool-registry';
import { ElicitationsService } from './elicitations';
import { createBuiltinTools } from './tools/builtin-tools';
import { SaveMemoryTool } from './tools/save-memory.tool';
import { ReadArtifactTool } from './tools/read-artifact.tool';
import { SessionSearchTool } from './tools/session-search.tool';

/** What a built-in tool factory may use. */
export interface AgentToolFactoryDeps {
  config: AppConfig;
  documents: MemoryDocuments;
  artifacts: ArtifactStore;
  sessionIndex: SessionIndex;
  sandbox: ExecSandboxService;
}

export type BuiltinToolFactory = (deps: AgentToolFactoryDeps) => AgentTool[];

/**
 * The built-in tools registered in the main registry at start (openspec builtin-tools, agent-runner): save_memory and
 * the file/web/exec tools. Tests replace one by registering a tool with the same name.
 */
export const BUILTIN_TOOL_FACTORIES: readonly BuiltinToolFactory[] = [
  ({ documents }) => [new SaveMemoryTool(documents)],
  ({ sessionIndex }) => [new SessionSearchTool(sessionIndex)],
  ({ artifacts }) => [new ReadArtifactTool(artifacts)],
  ({ config, sandbox }) => createBuiltinTools({ config, sandbox }),
];

/**
 * The agent: the tool registry (+ deferred view), the agent loop (AgentRunner) with its tool executor, the system
 * prompt builder and MCP elicitations. The loop reaches the model through MODEL_GATEWAY (bound here to the gateway
 * router of LlmSettingsModule, which picks the OpenAI-protocol or the Anthropic gateway per call) and asks TOOL_GATE
 * before a call runs (provided by the global ApprovalsModule, which this module never imports). Other modules register
 * their tools (MCP wrappers, skill tools) in ToolRegistry. The chat's history is HISTORY_LOG, bound here to memory's
 * HistoryLogStore.
 */
@Module({
  imports: [MemoryModule, SandboxModule, LlmSettingsModule],
  providers: [
    ToolRegistry,
    AgentRunner,
    ToolExecutor,
    // typed factories: the compiler checks that each implementation fits the agent's interface
    { provide: MODEL_GATEWAY, useFactory: (gateway: ModelGatewayRouter): ModelGateway => gateway, inject: [ModelGatewayRouter] },
    { provide: HISTORY_LOG, useFactory: (history: HistoryLogStore): HistoryLog => history, inject: [HistoryLogStore] },
    SystemPromptBuilder,
    ElicitationsService,
  ],
  exports: [ToolRegistry, AgentRunner, SystemPromptBuilder, ElicitationsService, HISTORY_LOG],
})
export class AgentModule implements OnModuleInit {
  private readonly logger = new Logger(AgentModule.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly documents: MemoryDocuments,
    private readonly artifacts: ArtifactStore,
    private readonly registry: ToolRegistry,
    private readonly sessionIndex: SessionIndex,
    private readonly sandbox: ExecSandboxService,
  ) {}

  onModuleInit(): void {
    const deps: AgentToolFactoryDeps = {
      config: this.config,
      documents: this.documents,
      artifacts: this.artifacts,
      sessionIndex: this.sessionIndex,
      sandbox: this.sandbox,
    };
    for (const factory of BUILTIN_TOOL_FACTORIES) {
      for (const tool of factory(deps)) this.registry.register(tool);
    }
    this.logger.debug(formatEvent('agent.tools.registered', { tools: this.registry.names().join(',') }));
  }
}
