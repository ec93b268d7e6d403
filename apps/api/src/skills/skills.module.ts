import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { SystemPromptBuilder } from '../agent/system-prompt';
import { ToolRegistry } from '../agent/tool-registry';
import { ExecTool } from '../agent/tools/exec.tool';
import { ApprovalsService } from '../approvals/approvals.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { McpModule } from '../mcp/mcp.module';
import { McpService } from '../mcp/mcp.service';
import { MemoryModule } from '../memory/memory.module';
import { SKILL_CATALOG, SkillCatalog } from './skill-catalog';
import { SkillGrantStore } from './skill-grant-store';
import { SkillGrantsController } from './skill-grants.controller';
import { SkillGrantsService } from './skill-grants.service';
import { SkillStore } from './skill-store';
import { AgentSkillManageTool, SkillLoadTool, SkillReadResourceTool, SkillSearchTool } from './skill-tools';
import { SKILL_USAGE_SECTION, SkillTurnService } from './skill-turn.service';
import { SkillsController } from './skills.controller';
import { SkillsAdminService } from './skills-admin.service';

/**
 * Skills: package validation, catalog and precedence, store with snapshots, ZIP import, the skill tools (registered
 * in the agent's ToolRegistry), REST, built-in skills, explicit selections for chat turns.
 * - SkillsAdminService: the REST administration (and agent/evolution creation), one mutation at a time.
 * - SkillTurnService: the Skills of a chat turn (explicit selections, skill_load, `allowed-tools` pre-approvals,
 *   prompt sections).
 * - SkillGrantsService: the owner's hash-bound grants of Skills' `allowed-tools` (REST, dropped on every change).
 * - skill-tools.ts: the model's skill tools, built on the services.
 * Depends on AgentModule (tools, prompt sections, approvals), McpModule (`mcp:` availability, required servers) and
 * MemoryModule (activated_skills); nothing in agent/ or mcp/ imports this module.
 */
@Module({
  imports: [AgentModule, McpModule, MemoryModule],
  controllers: [SkillsController, SkillGrantsController],
  providers: [
    {
      provide: SkillStore,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new SkillStore({
          builtin: config.skillsBuiltinDir,
          user: config.skillsUserDir,
          agent: config.skillsAgentDir,
          snapshots: config.skillSnapshotsDir,
        }),
    },
    {
      provide: SKILL_CATALOG,
      inject: [SkillStore, ToolRegistry, McpService, APP_CONFIG],
      useFactory: (store: SkillStore, registry: ToolRegistry, mcp: McpService, config: AppConfig) =>
        new SkillCatalog(
          store,
          {
            hasTool: (name) => registry.has(name),
            mcpServerConfigured: (name) => mcp.list().some((server) => server.name === name),
          },
          { binPath: config.skillBinPath, envNames: new Set(config.presentEnvNames) },
        ),
    },
    SkillsAdminService,
    SkillTurnService,
    SkillGrantStore,
    SkillGrantsService,
  ],
  exports: [SkillsAdminService, SkillTurnService, SkillGrantsService],
})
export class SkillsModule implements OnModuleInit {
  constructor(
    private readonly store: SkillStore,
    @Inject(SKILL_CATALOG) private readonly catalog: SkillCatalog,
    private readonly registry: ToolRegistry,
    private readonly prompt: SystemPromptBuilder,
    private readonly approvals: ApprovalsService,
    private readonly admin: SkillsAdminService,
    private readonly turns: SkillTurnService,
    private readonly grants: SkillGrantsService,
  ) {}

  /** Prepares the roots, registers the tools, the pre-approval source and the prompt sections, then scans. */
  async onModuleInit(): Promise<void> {
    await this.store.prepare();
    this.registry.registerMeta(new SkillSearchTool(this.catalog));
    this.registry.registerMeta(new SkillLoadTool(this.turns));
    this.registry.registerMeta(new SkillReadResourceTool(this.turns, this.catalog, this.store));
    this.registry.register(new AgentSkillManageTool(this.admin, this.store, this.grants));
    this.approvals.setPreApprovalSource({ preApprovals: (chatId) => this.turns.preApprovals(chatId) });
    // exec sees the Skills loaded in a chat read-only at /skills/<name> (a port: the agent module never imports Skills)
    const exec = this.registry.get('exec');
    if (exec instanceof ExecTool) {
      exec.setSkillMountSource({ mounts: (chatId) => this.turns.mountedSkills(chatId) });
      this.turns.setBaseDirectoryResolver((name, dir) => exec.skillBaseDirectory(name, dir));
    }
    this.prompt.registerSection({ name: 'skills.usage', order: 100, render: () => SKILL_USAGE_SECTION });
    this.prompt.registerSection({ name: 'skills.index', order: 105, render: ({ chatId }) => this.turns.skillIndex(chatId) });
    this.prompt.registerSection({
      name: 'skills.recent',
      order: 110,
      render: ({ chatId }) => this.turns.recentSkillsSummary(chatId),
    });
    await this.catalog.refresh();
    await this.grants.prepare();
  }
}
