import type { ApprovalCall } from '../agent/tool-gate';
import { alwaysScope, evaluateCall } from '../approvals/call-evaluation';
import { approvalRequest } from '../approvals/approval-texts';
import { DEFAULT_RISK_POLICIES, type ToolPolicyState } from '../approvals/tool-policy-store';
import { ScheduleTaskTool } from './schedule-task.tool';

const created: unknown[] = [];
const scheduleTask = new ScheduleTaskTool({
  minIntervalSec: 60,
  now: () => Date.parse('2026-07-01T00:00:00Z'),
  create: (body) => {
    created.push(body);
    return Promise.resolve({ id: 'a0000000000000001', name: 'Digest', next_run_at: null });
  },
});
const proposal = { name: 'Digest', prompt: 'Summarise.', schedule: { kind: 'cron', expression: '0 8 * * *', timezone: 'UTC' }, tools: ['web_search'] };
const call = (args: unknown): ApprovalCall => ({ chatId: 'c', turnId: 't', callId: 'x', tool: scheduleTask, rawArguments: JSON.stringify(args) });
const state = (patch: Partial<ToolPolicyState> = {}): ToolPolicyState => ({ defaults: { ...DEFAULT_RISK_POLICIES }, tools: {}, servers: {}, rules: [], ...patch });

describe('schedule_task', () => {
  it('Scenario: schedule_task asks even where a policy, a rule or its default would allow it', () => {
    const rules = [{ id: 'r', scope: { kind: 'tool' as const, tool: 'schedule_task' }, created_at: '' }];
    const relaxed = state({ defaults: { ...DEFAULT_RISK_POLICIES, schedule_task: 'allow' }, tools: { schedule_task: 'allow' }, rules });
    const evaluated = evaluateCall(call(proposal), relaxed, null);
    expect(evaluated).toMatchObject({ risk: 'schedule_task', policy: 'ask', preApproved: false });
    expect(alwaysScope(evaluated!)).toBeUndefined();
    const event = approvalRequest(evaluated!, Date.now(), false);
    expect(event.automation).toMatchObject({ name: 'Digest', schedule_description: 'At 08:00 (UTC)', tools: ['web_search'] });
    expect(event.automation?.next[0]).toMatch(/^2026-07-01T/);
    expect(evaluateCall(call(proposal), state({ tools: { schedule_task: 'deny' } }), null)).toMatchObject({ policy: 'deny' });
  });

  it('an invalid proposal asks nothing and the tool refuses it without creating anything', async () => {
    const bad = { ...proposal, schedule: { kind: 'cron', expression: '0 8 * * *', timezone: 'Nowhere/City' } };
    expect(evaluateCall(call(bad), state(), null)).toBeNull();
    expect(await scheduleTask.execute(bad, { chatId: 'c', turnId: 't', signal: new AbortController().signal })).toMatch(/^Error: schedule.timezone/);
    expect(created).toEqual([]);
    expect(await scheduleTask.execute(proposal, { chatId: 'c', turnId: 't', signal: new AbortController().signal })).toContain('was created');
    expect(created).toMatchObject([{ name: 'Digest', approvals: 'deny', delivery: null, tools: ['web_search'] }]);
  });
});
