import { Inject, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { ApprovalAuditLog } from '../approvals/approval-audit';
import { ApprovalAuditController, ToolPoliciesController } from '../approvals/approvals.controller';
import { ApprovalsService } from '../approvals/approvals.service';
import { ToolPolicyStore } from '../approvals/tool-policy-store';
import { formatEvent } from '../common/log-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { OpenAiModelGateway } from '../llm-settings/openai-model-gateway';
import { MemoryModule } from '../memory/memory.module';
import { MemoryStore } from '../memory/memory-store';
import { SessionIndex } from '../memory/session-index';
import type { AgentTool } from './agent-tool';
import { AgentRunner } from './agent-runner';
import { MODEL_GATEWAY, type ModelGateway } from './model-gateway';
import { TOOL_GATE, type ToolGate } from './tool-gate';
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
  memory: MemoryStore;
  sessionIndex: SessionIndex;
  sandbox: ExecSandboxService;
}

export type BuiltinToolFactory = (deps: AgentToolFactoryDeps) => AgentTool[];

/**
 * The built-in tools registered in the main registry at start (openspec builtin-tools, agent-runner): save_memory and
 * the file/web/exec tools. Tests replace one by registering a tool with the same name.
 */
export const BUILTIN_TOOL_FACTORIES: readonly BuiltinToolFactory[] = [
  ({ memory }) => [new SaveMemoryTool(memory)],
  ({ sessionIndex }) => [new SessionSearchTool(sessionIndex)],
  ({ memory }) => [new ReadArtifactTool(memory)],
  ({ config, sandbox }) => createBuiltinTools({ config, sandbox }),
];

/**
 * The agent: tool registry (+ deferred view), the streaming ReAct runner, the system prompt builder, and the tool
 * policies and approvals the runner asks before a call runs (apps/api/src/approvals: the policy store, the audit log,
 * the approval service and their REST controllers). Other modules register their tools (MCP wrappers, skill tools)
 * in ToolRegistry; the skills module plugs its `allowed-tools` pre-approvals into ApprovalsService.
 */
@Module({
  imports: [MemoryModule, SandboxModule, LlmSettingsModule],
  controllers: [ToolPoliciesController, ApprovalAuditController],
  providers: [
    ToolRegistry,
    AgentRunner,
    ToolExecutor,
    // typed factories: the compiler checks that each implementation fits its interface
    { provide: MODEL_GATEWAY, useFactory: (gateway: OpenAiModelGateway): ModelGateway => gateway, inject: [OpenAiModelGateway] },
    { provide: TOOL_GATE, useFactory: (approvals: ApprovalsService): ToolGate => approvals, inject: [ApprovalsService] },
    SystemPromptBuilder,
    ToolPolicyStore,
    ApprovalAuditLog,
    ApprovalsService,
    ElicitationsService,
  ],
  exports: [ToolRegistry, AgentRunner, SystemPromptBuilder, ApprovalsService, ElicitationsService, ApprovalAuditLog],
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
    this.logger.debug(formatEvent('agent.tools.registered', { tools: this.registry.names().join(',') }));
  }
}
