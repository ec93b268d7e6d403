import type { Automation, AutomationRun } from '@cashcode/contracts';

/** Test data of the automations specs: a weekday-morning automation, with what a test overrides. */
export function automation(partial: Partial<Automation> = {}): Automation {
  return {
    id: 'a1',
    name: 'Morning brief',
    prompt: 'Summarise my inbox',
    schedule: { kind: 'cron', expression: '0 8 * * 1-5', timezone: 'Europe/Berlin' },
    enabled: true,
    llm: null,
    tools: null,
    mcp_servers: null,
    skills: null,
    approvals: 'deny',
    budget: null,
    max_run_seconds: 600,
    chat_mode: 'single',
    missed: 'run_once',
    delivery: null,
    source: 'owner',
    created_at: '2026-12-01T08:00:00+00:00',
    updated_at: '2026-12-01T08:00:00+00:00',
    next_run_at: '2026-12-07T07:00:00+00:00',
    last_run: null,
    running: false,
    ...partial,
  };
}

export function run(partial: Partial<AutomationRun> = {}): AutomationRun {
  return {
    id: 'r1',
    automation_id: 'a1',
    started_at: '2026-12-04T08:00:00+00:00',
    ended_at: '2026-12-04T08:00:05+00:00',
    outcome: 'ok',
    error: null,
    cost_usd: 0.0123,
    tokens: 1500,
    chat_id: 'automation-a1',
    trigger: 'manual',
    ...partial,
  };
}
