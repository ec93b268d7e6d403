/**
 * `schedule_task`: the agent proposes an automation (openspec automations "Requirement: The agent proposes, the owner
 * decides"). The call always asks the owner (risk `schedule_task`, call-evaluation.ts); the card shows the name, the
 * prompt, the schedule in words with its next times, and the tools. Approved → the automation is created (source
 * `agent`, approvals `deny`, no delivery); denied → nothing. Invalid arguments ask nothing: the tool refuses them.
 */
import type { AutomationSchedule, ProposedAutomation } from '@cashcode/contracts';
import type { AgentTool, ApprovalDetails, JsonSchemaObject, ToolContext } from '../agent/agent-tool';
import { localIsoWithOffset } from '../common/local-iso-time';
import { checkSchedule, describeSchedule, nextDueTimes } from './automation-schedule';
import { parseAutomationInput } from './automation-input';
import { AutomationError } from './automations.errors';

/** What the tool needs of the automations service. */
export interface ScheduleTaskTarget {
  minIntervalSec: number;
  now(): number;
  create(body: unknown, source: 'agent'): Promise<{ id: string; name: string; next_run_at: string | null }>;
}

const NAMES = { type: ['array', 'null'], items: { type: 'string' } };

export class ScheduleTaskTool implements AgentTool {
  readonly name = 'schedule_task';
  // most chats never schedule: offered once activated in the chat (agent-tool.ts `deferred`)
  readonly deferred = {
    keywords: ['schedule', 'scheduled', 'remind', 'reminder', 'recurring', 'every day', 'every morning', 'every week', 'daily', 'weekly', 'cron', 'automation', 'automate'],
  };
  readonly description =
    'Propose a scheduled task (an automation) that runs a prompt later or repeatedly as its own chat turn. The owner ' +
    'is always asked before it is created. schedule: {"kind":"cron","expression":"0 8 * * 1-5","timezone":"Europe/Berlin"} | ' +
    '{"kind":"interval","every_seconds":3600} | {"kind":"once","at":"2026-05-01T08:00:00+02:00"}. tools / mcp_servers / ' +
    'skills: built-in tool, MCP server and Skill names, the only ones the runs may use (null or absent: all). Runs deny ' +
    'tool calls that need approval.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'a short name, e.g. "Weekday news summary"' },
      prompt: { type: 'string', description: 'what the agent is asked at each run' },
      // the description shows the schedule's three shapes and what tools / mcp_servers / skills mean: said once
      schedule: { type: 'object' },
      tools: NAMES,
      mcp_servers: NAMES,
      skills: NAMES,
    },
    required: ['name', 'prompt', 'schedule'],
    additionalProperties: false,
  };
  readonly readOnly = false;

  constructor(private readonly target: ScheduleTaskTarget) {}

  approvalDetails(args: Record<string, unknown>): ApprovalDetails | null {
    const proposal = this.proposal(args);
    return typeof proposal === 'string' ? null : { automation: proposal };
  }

  async execute(args: Record<string, unknown>, _ctx: ToolContext): Promise<string> {
    const proposal = this.proposal(args);
    if (typeof proposal === 'string') return `Error: ${proposal}`;
    try {
      const created = await this.target.create(this.body(proposal), 'agent');
      return `The owner approved; the automation "${created.name}" (${created.id}) was created. Next run: ${created.next_run_at ?? 'none'}.`;
    } catch (err) {
      if (err instanceof AutomationError) return `Error: the automation was not created: ${err.message}`;
      throw err;
    }
  }

  /** The checked proposal, or why it is not one. */
  private proposal(args: Record<string, unknown>): ProposedAutomation | string {
    const extra = Object.keys(args).filter((key) => !(key in this.parameters.properties));
    if (extra.length > 0) return `unknown argument ${JSON.stringify(extra[0])}`;
    const schedule = checkSchedule(args['schedule'], this.target.minIntervalSec);
    if (!schedule.ok) return `${schedule.errors[0]?.field}: ${schedule.errors[0]?.message}`;
    const names = (key: string) => (Array.isArray(args[key]) ? (args[key] as string[]) : null);
    try {
      parseAutomationInput(this.body({ name: args['name'], prompt: args['prompt'], schedule: schedule.schedule, tools: names('tools'), mcp_servers: names('mcp_servers'), skills: names('skills') }), this.target.minIntervalSec);
    } catch (err) {
      if (err instanceof AutomationError) return err.message;
      throw err;
    }
    return {
      name: (args['name'] as string).trim(),
      prompt: args['prompt'] as string,
      schedule: schedule.schedule,
      schedule_description: describeSchedule(schedule.schedule),
      next: nextDueTimes(schedule.schedule, this.target.now(), 5).map((ms) => localIsoWithOffset(new Date(ms))),
      tools: names('tools'),
      mcp_servers: names('mcp_servers'),
      skills: names('skills'),
    };
  }

  private body(proposal: { name: unknown; prompt: unknown; schedule: AutomationSchedule; tools: string[] | null; mcp_servers: string[] | null; skills: string[] | null }) {
    return {
      name: proposal.name,
      prompt: proposal.prompt,
      schedule: proposal.schedule,
      enabled: true,
      llm: null,
      tools: proposal.tools,
      mcp_servers: proposal.mcp_servers,
      skills: proposal.skills,
      approvals: 'deny',
      budget: null,
      chat_mode: 'single',
      missed: 'run_once',
      delivery: null,
    };
  }
}
