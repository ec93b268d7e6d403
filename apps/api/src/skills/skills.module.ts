import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ToolRegistry } from '../agent/tool-registry';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { McpModule } from '../mcp/mcp.module';
import { McpService } from '../mcp/mcp.service';
import { MemoryModule } from '../memory/memory.module';
import { SkillCatalog } from './skill-catalog';
import { SkillStore } from './skill-store';
import { SkillsController } from './skills.controller';
import { SKILL_CATALOG, SkillsService } from './skills.service';

/**
 * Skills (openspec skills): package validation, catalog and precedence, store with snapshots, ZIP import, the skill
 * tools (registered in the agent's ToolRegistry), REST, built-in skills, explicit selections for chat turns.
 * Depends on AgentModule (tools, prompt sections), McpModule (`mcp:` availability, required servers) and MemoryModule
 * (activated_skills); nothing in agent/ or mcp/ imports this module.
 */
@Module({
  imports: [AgentModule, McpModule, MemoryModule],
  controllers: [SkillsController],
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
    SkillsService,
  ],
  exports: [SkillsService],
})
export class SkillsModule {}
