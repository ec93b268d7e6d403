import type { ApprovalRequestEvent, ApprovalResolvedEvent, StandingRule, StandingRuleScope } from '@cashcode/contracts';
import type { AgentTool } from '../agent/agent-tool';
import type { ApprovalCall } from '../agent/tool-gate';
import type { AppConfig } from '../config/app-config';
import { Logger } from '@nestjs/common';
import { ApprovalsService } from './approvals.service';
import { DEFAULT_RISK_POLICIES, type ToolPolicyState } from './tool-policy-store';

const writeFile: AgentTool = { name: 'write_file', description: '', parameters: { type: 'object', properties: {} }, readOnly: false, execute: () => Promise.resolve('') };

/** The gate with its stores replaced by in-memory stand-ins: policies `write: allow`, rules added as asked. */
function gateWith(state: ToolPolicyState): ApprovalsService {
  const rules = {
    addRule: (scope: StandingRuleScope): Promise<StandingRule> => {
      const rule = { id: `rule_${state.rules.length}`, scope, created_at: '' };
      state.rules.push(rule);
      return Promise.resolve(rule);
    },
  };
  return new ApprovalsService(
    { approvalTimeoutSec: 60 } as AppConfig,
    { current: state } as never,
    rules as never,
    { append: () => Promise.resolve() } as never,
    { status: () => ({ active: 'bwrap' }) } as never,
    { stillUntrusted: (sources: unknown[] | undefined) => [...(sources ?? [])] } as never,
  );
}

function call(callId: string, requester?: 'non_owner'): ApprovalCall {
  return {
    chatId: 'tg-1--100',
    turnId: 't',
    callId,
    tool: writeFile,
    rawArguments: '{"path":"a.txt","content":"x"}',
    untrustedSources: [],
    ...(requester ? { requester } : {}),
  };
}

describe('ApprovalsService and non-owner turns', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it("a rule the owner stores while a non-owner's call waits does not answer it; headless, a non-owner's call is denied", async () => {
    const state: ToolPolicyState = { defaults: { ...DEFAULT_RISK_POLICIES, write: 'ask' }, tools: {}, servers: {}, rules: [] };
    const gate = gateWith(state);
    const requests: ApprovalRequestEvent[] = [];
    const resolved: ApprovalResolvedEvent[] = [];
    const emitter = { request: (event: ApprovalRequestEvent) => requests.push(event), resolved: (event: ApprovalResolvedEvent) => resolved.push(event) };
    const signal = new AbortController().signal;
    const owner = gate.gate(call('own1'));
    const stranger = gate.gate(call('non1', 'non_owner'));
    const ownerVerdict = owner.open(emitter, signal);
    const strangerVerdict = stranger.open(emitter, signal);
    expect(requests.map((event) => [event.call_id, event.always_scope !== undefined])).toEqual([
      ['own1', true],
      ['non1', false],
    ]);
    // the owner's "always" stores a rule for write_file: it answers nothing of the stranger's
    expect(await gate.decide('tg-1--100', 'own1', 'allow_always')).toEqual({ ok: true });
    expect(await ownerVerdict).toEqual({ run: true });
    expect(state.rules).toHaveLength(1);
    expect(gate.pendingRequests('tg-1--100').map((event) => event.call_id)).toEqual(['non1']);
    // an "always" for the stranger's call applies once and stores nothing
    expect(await gate.decide('tg-1--100', 'non1', 'allow_always')).toEqual({ ok: true });
    expect(await strangerVerdict).toEqual({ run: true });
    expect(resolved.find((event) => event.call_id === 'non1')).toMatchObject({ decision: 'allow_once', by: 'user' });
    expect(state.rules).toHaveLength(1);
    // with the rule in place: the owner's next call runs unasked, the stranger's asks again (headless: denied)
    expect(await gate.gate(call('own2')).open(emitter, signal)).toEqual({ run: true });
    expect(resolved.find((event) => event.call_id === 'own2')).toMatchObject({ decision: 'allow_once', by: 'policy' });
    const headless = gate.gate({ ...call('non2', 'non_owner'), headless: true });
    expect(headless.plainAllow).toBe(false);
    expect(await headless.open(emitter, signal)).toMatchObject({ run: false });
    expect(resolved.find((event) => event.call_id === 'non2')).toMatchObject({ decision: 'deny', by: 'policy' });
  });
});
