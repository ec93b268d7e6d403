import { Inject, Module, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module';
import { ToolRegistry } from '../agent/tool-registry';
import { ChatGateway } from '../chat/chat.gateway';
import { ChatModule } from '../chat/chat.module';
import { ChatService } from '../chat/chat.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AUTOMATION_RUN_ENDED_EVENT, MODEL_CALL_RECORDED_EVENT } from '../events/app-events';
import { AppEventBus } from '../events/event-bus';
import { LLM_CLIENT_PROVIDER, type LlmClientProvider } from '../llm-settings/llm-provider';
import { LlmSettingsModule } from '../llm-settings/llm-settings.module';
import { McpModule } from '../mcp/mcp.module';
import { McpService } from '../mcp/mcp.service';
import { SkillsModule } from '../skills/skills.module';
import { SkillsAdminService } from '../skills/skills-admin.service';
import { UsageService } from '../usage/usage.service';
import { AUTOMATION_DELIVERY, type AutomationDelivery } from './automation-delivery';
import { AutomationRunner } from './automation-runner';
import { AUTOMATION_CLOCK, AutomationScheduler, REAL_CLOCK, type AutomationClock } from './automation-scheduler';
import { AutomationStore } from './automation-store';
import type { AutomationCatalog } from './automation-tools';
import { AutomationsController } from './automations.controller';
import { AutomationsService } from './automations.service';
import { RunBudgets } from './run-budgets';
import { ScheduleTaskTool } from './schedule-task.tool';

function catalog(registry: ToolRegistry, mcp: McpService, skills: SkillsAdminService): AutomationCatalog {
  return {
    toolNames: () => registry.allTools().filter((tool) => !tool.mcp).map((tool) => tool.name),
    mcpServerNames: () => mcp.list().map((server) => server.name),
    skillExists: (name) => skills.get(name).then(() => true, () => false),
  };
}

/**
 * Automations (openspec automations): scheduled prompts run as chat turns through ChatService, one timer for all of
 * them, the `schedule_task` tool and `/api/automations`. A channel module may provide AUTOMATION_DELIVERY (globally) to
 * send run answers to a conversation.
 */
@Module({
  imports: [ChatModule, AgentModule, McpModule, SkillsModule, LlmSettingsModule],
  controllers: [AutomationsController],
  providers: [
    { provide: AUTOMATION_CLOCK, useValue: REAL_CLOCK },
    { provide: RunBudgets, useFactory: () => new RunBudgets() },
    {
      provide: AutomationsService,
      inject: [APP_CONFIG, AUTOMATION_CLOCK, ChatService, ChatGateway, RunBudgets, ToolRegistry, McpService, SkillsAdminService, LLM_CLIENT_PROVIDER, AppEventBus, { token: AUTOMATION_DELIVERY, optional: true }],
      useFactory: (
        config: AppConfig,
        clock: AutomationClock,
        chat: ChatService,
        gateway: ChatGateway,
        budgets: RunBudgets,
        registry: ToolRegistry,
        mcp: McpService,
        skills: SkillsAdminService,
        llm: LlmClientProvider,
        events: AppEventBus,
        delivery: AutomationDelivery | undefined,
      ) => {
        const store = new AutomationStore(config.dataDir);
        const names = catalog(registry, mcp, skills);
        const runner = new AutomationRunner({
          chat,
          store,
          budgets,
          catalog: names,
          defaultModel: () => llm.lastSelection() ?? llm.backgroundSelection(),
          delivery: delivery ?? null,
          announce: (run, automation) => gateway.broadcast({ event: 'automation_run', type: 'automation_run', run: { ...run }, automation_name: automation.name }),
          ended: (run) => {
            if (run.outcome !== 'running') events.emit(AUTOMATION_RUN_ENDED_EVENT, { automationId: run.automation_id, outcome: run.outcome, trigger: run.trigger });
          },
          now: () => clock.now(),
        });
        return new AutomationsService({
          store,
          scheduler: (onDue) => new AutomationScheduler(clock, onDue),
          runner,
          catalog: names,
          delivery: delivery ?? null,
          now: () => clock.now(),
          minIntervalSec: config.automationMinIntervalSec,
        });
      },
    },
  ],
  exports: [AutomationsService],
})
export class AutomationsModule implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private unsubscribe: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(AUTOMATION_CLOCK) private readonly clock: AutomationClock,
    private readonly automations: AutomationsService,
    private readonly budgets: RunBudgets,
    private readonly registry: ToolRegistry,
    private readonly usage: UsageService,
    private readonly events: AppEventBus,
  ) {}

  onModuleInit(): void {
    this.usage.addCallGuard(this.budgets);
    this.unsubscribe = this.events.on(MODEL_CALL_RECORDED_EVENT, (record) => this.budgets.record(record));
    this.registry.register(
      new ScheduleTaskTool({
        minIntervalSec: this.config.automationMinIntervalSec,
        now: () => this.clock.now(),
        create: (body, source) => this.automations.create(body, source),
      }),
    );
  }

  /** After every module is up (tools, MCP, Skills): load, handle missed runs, arm the timer. */
  async onApplicationBootstrap(): Promise<void> {
    await this.automations.start();
  }

  onModuleDestroy(): void {
    this.automations.stop();
    this.unsubscribe?.();
  }
}
