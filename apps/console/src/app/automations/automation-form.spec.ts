import { automationInput, checkDraft, draftInput, draftOf, draftSchedule, newDraft, problemFieldErrors } from './automation-form';
import { automation } from './automation-testing';

describe('automation editor rules', () => {
  it('Scenario: the editor refuses an incomplete automation at its fields before sending', () => {
    const draft = { ...newDraft('UTC'), cronExpression: ' ', budgetUsd: '0', maxRunMinutes: '-1', tools: [] };
    expect(checkDraft(draft)).toEqual({
      name: 'automations.error.required',
      prompt: 'automations.error.required',
      schedule: 'automations.error.schedule',
      tools: 'automations.error.noTools',
      budget: 'automations.error.positive',
      maxRun: 'automations.error.maxRun',
    });
    const complete = { ...newDraft('UTC'), name: 'Brief', prompt: 'Summarise' };
    expect(checkDraft(complete)).toEqual({});
    expect(checkDraft({ ...complete, scheduleKind: 'interval', intervalValue: 'x' })).toEqual({ schedule: 'automations.error.interval' });
    expect(checkDraft({ ...complete, scheduleKind: 'once', onceAt: '' })).toEqual({ schedule: 'automations.error.schedule' });
  });

  it('builds the request body from the draft', () => {
    const draft = {
      ...newDraft('Europe/Berlin'),
      name: '  Brief ',
      prompt: 'Summarise',
      scheduleKind: 'interval' as const,
      intervalValue: '2',
      intervalUnit: 'hours' as const,
      model: 'openai_compatible/gpt-x/mini',
      tools: ['read_file'],
      approvals: 'wait' as const,
      budgetTokens: '5000',
      budgetUsd: '',
      maxRunMinutes: '15',
      chatMode: 'per_run' as const,
      missed: 'skip' as const,
    };
    expect(draftInput(draft)).toEqual({
      name: 'Brief',
      prompt: 'Summarise',
      schedule: { kind: 'interval', every_seconds: 7200 },
      enabled: true,
      llm: { provider: 'openai_compatible', model: 'gpt-x/mini' },
      tools: ['read_file'],
      mcp_servers: null,
      skills: null,
      approvals: 'wait',
      budget: { tokens: 5000 },
      max_run_seconds: 900,
      chat_mode: 'per_run',
      missed: 'skip',
      delivery: null,
    });
    expect(draftSchedule({ ...draft, scheduleKind: 'once', onceAt: '2026-12-24T18:00', timezone: 'Europe/Berlin' })).toEqual({
      kind: 'once',
      at: '2026-12-24T18:00:00+01:00',
    });
  });

  it('edits an automation without changing what the editor does not show', () => {
    const saved = automation({
      llm: { provider: 'ollama', model: 'llama3' },
      tools: ['web_fetch'],
      mcp_servers: ['github'],
      skills: ['pdf'],
      budget: { usd: 0.5 },
      delivery: { channel: { kind: 'telegram', chat_id: '42' } },
      schedule: { kind: 'interval', every_seconds: 172_800 },
      max_run_seconds: 90,
    });
    const draft = draftOf(saved, 'UTC');
    expect(draft.intervalValue).toBe('2');
    expect(draft.intervalUnit).toBe('days');
    expect(draft.maxRunMinutes).toBe('1.5');
    expect(draftInput(draft)).toEqual(automationInput(saved));
    const cron = draftOf(automation(), 'UTC');
    expect(cron).toMatchObject({ scheduleKind: 'cron', cronExpression: '0 8 * * 1-5', timezone: 'Europe/Berlin' });
    const once = draftOf(automation({ schedule: { kind: 'once', at: '2026-12-24T17:00:00Z' } }), 'Europe/Berlin');
    expect(once.onceAt).toBe('2026-12-24T18:00');
  });

  it('Scenario: a refused save shows each problem field error at its field', () => {
    expect(
      problemFieldErrors(
        [
          { field: 'schedule.expression', message: 'not a valid cron expression' },
          { field: 'budget.tokens', message: 'must be above 0' },
          { field: 'budget.usd', message: 'must be above 0 too' },
          { field: 'max_run_seconds', message: 'too long' },
          { field: 'delivery', message: 'unknown channel' },
          { field: 'mcp_servers', message: 'not a list' },
        ],
        'invalid_automation',
        'x',
      ),
    ).toEqual({
      schedule: 'not a valid cron expression',
      budget: 'must be above 0; must be above 0 too',
      maxRun: 'too long',
      delivery: 'unknown channel',
      form: 'mcp_servers: not a list',
    });
    // without field errors: the code names the field, else the form
    expect(problemFieldErrors([], 'invalid_timezone', 'Mars/Olympus is not a time zone')).toEqual({ schedule: 'Mars/Olympus is not a time zone' });
    expect(problemFieldErrors([], 'unknown_tool', 'no tool x')).toEqual({ tools: 'no tool x' });
    expect(problemFieldErrors([], 'invalid_delivery', 'chat 9 is not an approved sender')).toEqual({ delivery: 'chat 9 is not an approved sender' });
    expect(problemFieldErrors([], 'automation_save_failed', 'disk full')).toEqual({ form: 'disk full' });
  });
});
