import type { McpServerStatus, ServerEvent, UsageRecord } from '@cashcode/contracts';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test, type TestingModule } from '@nestjs/testing';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** A sample as getMetricsAsJSON gives it (histogram samples also name their series: `_bucket`, `_sum`, `_count`). */
type Sample = MetricValue<string> & { metricName?: string };
import { Subject } from 'rxjs';
import type { AgentTool } from '../agent/agent-tool';
import { ToolRegistry } from '../agent/tool-registry';
import { ChatGateway } from '../chat/chat.gateway';
import { ChatService } from '../chat/chat.service';
import { AGENT_RUNAWAY_EVENT, AUTOMATION_RUN_ENDED_EVENT, MODEL_CALL_RECORDED_EVENT } from '../events/app-events';
import { AppEventBus, EventsModule } from '../events/event-bus';
import { McpService } from '../mcp/mcp.service';
import { MetricsService } from './metrics.service';

const CHAT_ID = 'secret-chat-4f2a';

/**
 * The service in a Nest module with the real event bus and tool registry; the chat's event stream, the gateway's
 * connection count and the MCP states are small stand-ins the test drives (the e2e suite runs the real ones).
 */
describe('MetricsService', () => {
  let moduleRef: TestingModule;
  let service: MetricsService;
  let bus: AppEventBus;
  const events = new Subject<{ chatId: string; event: ServerEvent }>();
  let connections = 0;
  let mcpStates = new Map<McpServerStatus, number>();

  beforeAll(async () => {
    const tools = new ToolRegistry();
    tools.register({ name: 'read_file', description: 'read', parameters: {}, readOnly: true, execute: () => Promise.resolve('') } as unknown as AgentTool);
    moduleRef = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot(), EventsModule],
      providers: [
        MetricsService,
        { provide: ChatService, useValue: { events$: events.asObservable() } },
        { provide: ChatGateway, useValue: { get connectionCount() { return connections; } } },
        { provide: McpService, useValue: { statusCounts: () => mcpStates } },
        { provide: ToolRegistry, useValue: tools },
      ],
    }).compile();
    await moduleRef.init();
    service = moduleRef.get(MetricsService);
    bus = moduleRef.get(AppEventBus);
  });
  afterAll(async () => {
    await moduleRef?.close();
  });

  const publish = (event: ServerEvent) => events.next({ chatId: CHAT_ID, event });

  async function metric(name: string): Promise<MetricObjectWithValues<Sample>> {
    const found = (await service.registry.getMetricsAsJSON()).find((m) => m.name === name);
    if (!found) throw new Error(`no metric ${name}`);
    return found as MetricObjectWithValues<Sample>;
  }
  async function value(name: string, labels: Record<string, string>): Promise<number | undefined> {
    const { values } = await metric(name);
    return values.find(
      (v) => Object.keys(labels).length === Object.keys(v.labels).length && Object.entries(labels).every(([k, l]) => v.labels[k] === l),
    )?.value;
  }

  it('Scenario: turns are counted by outcome, errors by their code, and completed turns are timed', async () => {
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    publish({ event: 'delta', chat_id: CHAT_ID, text: 'hello', stream_id: 1 });
    publish({ event: 'done', chat_id: CHAT_ID, duration_sec: 1.5, usage, cancelled: false });
    publish({ event: 'done', chat_id: CHAT_ID, duration_sec: 0.2, usage, cancelled: true });
    publish({ event: 'error', chat_id: CHAT_ID, detail: 'The model failed', code: 'rate_limit' });
    publish({ event: 'error', chat_id: CHAT_ID, detail: 'odd', code: 'not a listed code' });
    expect(await value('cashcode_turns_total', { outcome: 'ok' })).toBe(1);
    expect(await value('cashcode_turns_total', { outcome: 'cancelled' })).toBe(1);
    expect(await value('cashcode_turns_total', { outcome: 'error', code: 'rate_limit' })).toBe(1);
    expect(await value('cashcode_turns_total', { outcome: 'error', code: 'other' })).toBe(1);
    const histogram = await metric('cashcode_turn_duration_seconds');
    const count = (outcome: string) =>
      histogram.values.find((v) => v.metricName === 'cashcode_turn_duration_seconds_count' && v.labels['outcome'] === outcome)?.value;
    expect(count('ok')).toBe(1);
    expect(count('cancelled')).toBe(1);
    expect(
      histogram.values.find((v) => v.metricName === 'cashcode_turn_duration_seconds_sum' && v.labels['outcome'] === 'ok')?.value,
    ).toBe(1.5);
  });

  it('Scenario: tool calls are counted by tool and outcome; an unregistered name counts as unknown', async () => {
    const result = (tool_name: string, ok: boolean): ServerEvent => ({
      event: 'tool_result',
      chat_id: CHAT_ID,
      tool_name,
      result: 'text the model must never see in a label',
      stream_id: 1,
      call_id: 'call-1',
      ok,
      duration_ms: 3,
    });
    publish(result('read_file', true));
    publish(result('read_file', false));
    publish(result('made_up_by_the_model', true));
    expect(await value('cashcode_tool_calls_total', { tool: 'read_file', outcome: 'ok' })).toBe(1);
    expect(await value('cashcode_tool_calls_total', { tool: 'read_file', outcome: 'error' })).toBe(1);
    expect(await value('cashcode_tool_calls_total', { tool: 'unknown', outcome: 'ok' })).toBe(1);
  });

  it('Scenario: approval decisions are counted by decision and by who decided', async () => {
    publish({ event: 'approval_resolved', chat_id: CHAT_ID, call_id: 'c1', decision: 'allow_once', by: 'user' });
    publish({ event: 'approval_resolved', chat_id: CHAT_ID, call_id: 'c2', decision: 'deny', by: 'timeout' });
    publish({ event: 'approval_resolved', chat_id: CHAT_ID, call_id: 'c3', decision: 'allow_once', by: 'policy' });
    expect(await value('cashcode_approval_decisions_total', { decision: 'allow_once', by: 'user' })).toBe(1);
    expect(await value('cashcode_approval_decisions_total', { decision: 'deny', by: 'timeout' })).toBe(1);
    expect(await value('cashcode_approval_decisions_total', { decision: 'allow_once', by: 'policy' })).toBe(1);
  });

  it('Scenario: the runaway guard is counted by reason and outcome', async () => {
    bus.emit(AGENT_RUNAWAY_EVENT, { chatId: CHAT_ID, turnId: 't1', reason: 'repeated_call', outcome: 'answered' });
    bus.emit(AGENT_RUNAWAY_EVENT, { chatId: CHAT_ID, turnId: 't2', reason: 'repeated_call', outcome: 'answered' });
    bus.emit(AGENT_RUNAWAY_EVENT, { chatId: CHAT_ID, turnId: 't3', reason: 'tool_call_ceiling', outcome: 'stopped' });
    expect(await value('cashcode_runaway_guard_total', { reason: 'repeated_call', outcome: 'answered' })).toBe(2);
    expect(await value('cashcode_runaway_guard_total', { reason: 'tool_call_ceiling', outcome: 'stopped' })).toBe(1);
    expect(await value('cashcode_runaway_guard_total', { reason: 'tool_call_ceiling', outcome: 'answered' })).toBeUndefined();
  });

  it('Scenario: automation runs are counted by outcome and trigger', async () => {
    bus.emit(AUTOMATION_RUN_ENDED_EVENT, { automationId: 'a1', outcome: 'ok', trigger: 'schedule' });
    bus.emit(AUTOMATION_RUN_ENDED_EVENT, { automationId: 'a1', outcome: 'ok', trigger: 'schedule' });
    bus.emit(AUTOMATION_RUN_ENDED_EVENT, { automationId: 'a2', outcome: 'skipped', trigger: 'schedule' });
    bus.emit(AUTOMATION_RUN_ENDED_EVENT, { automationId: 'a2', outcome: 'runaway_stopped', trigger: 'manual' });
    expect(await value('cashcode_automation_runs_total', { outcome: 'ok', trigger: 'schedule' })).toBe(2);
    expect(await value('cashcode_automation_runs_total', { outcome: 'skipped', trigger: 'schedule' })).toBe(1);
    expect(await value('cashcode_automation_runs_total', { outcome: 'runaway_stopped', trigger: 'manual' })).toBe(1);
    expect(await value('cashcode_automation_runs_total', { outcome: 'ok', trigger: 'manual' })).toBeUndefined();
  });

  it('Scenario: a recorded model call moves the call, token and latency metrics of its provider, model and purpose', async () => {
    const record: UsageRecord = {
      id: 1,
      at: '2026-01-01T00:00:00.000+00:00',
      provider: 'openai_compatible',
      model: 'gpt-test',
      purpose: 'chat',
      chat_id: CHAT_ID,
      prompt_tokens: 120,
      cached_tokens: 20,
      completion_tokens: 30,
      total_tokens: 150,
      estimated: false,
      duration_ms: 750,
      outcome: 'ok',
    };
    bus.emit(MODEL_CALL_RECORDED_EVENT, record);
    bus.emit(MODEL_CALL_RECORDED_EVENT, { ...record, id: 2, outcome: 'error', error_code: 'rate_limit', duration_ms: 50 });
    const labels = { provider: 'openai_compatible', model: 'gpt-test', purpose: 'chat' };
    expect(await value('cashcode_model_calls_total', { ...labels, outcome: 'ok' })).toBe(1);
    expect(await value('cashcode_model_calls_total', { ...labels, outcome: 'error' })).toBe(1);
    expect(await value('cashcode_model_tokens_total', { ...labels, outcome: 'ok', type: 'prompt' })).toBe(120);
    expect(await value('cashcode_model_tokens_total', { ...labels, outcome: 'ok', type: 'cached' })).toBe(20);
    expect(await value('cashcode_model_tokens_total', { ...labels, outcome: 'ok', type: 'completion' })).toBe(30);
    const histogram = await metric('cashcode_model_call_duration_seconds');
    const sum = histogram.values.find(
      (v) => v.metricName === 'cashcode_model_call_duration_seconds_sum' && v.labels['outcome'] === 'ok',
    );
    expect(sum).toMatchObject({ labels: { ...labels, outcome: 'ok' }, value: 0.75 });
  });

  it('Scenario: the gauges are read on scrape: WebSocket connections and MCP servers by state', async () => {
    connections = 3;
    mcpStates = new Map([['connected', 2], ['error', 1]]);
    expect(await value('cashcode_ws_connections', {})).toBe(3);
    expect(await value('cashcode_mcp_servers', { state: 'connected' })).toBe(2);
    expect(await value('cashcode_mcp_servers', { state: 'error' })).toBe(1);
    expect(await value('cashcode_mcp_servers', { state: 'disconnected' })).toBe(0);
    connections = 0;
    mcpStates = new Map();
    expect(await value('cashcode_ws_connections', {})).toBe(0);
    expect(await value('cashcode_mcp_servers', { state: 'connected' })).toBe(0);
  });

  it('Scenario: no label carries a chat id, a call id or text, and process metrics are prefixed', async () => {
    const text = await service.render();
    expect(text).toContain('cashcode_process_cpu_user_seconds_total');
    expect(text).toContain('cashcode_nodejs_eventloop_lag_seconds');
    expect(text).not.toContain(CHAT_ID);
    expect(text).not.toContain('call-1');
    expect(text).not.toContain('hello');
    expect(text).not.toContain('text the model must never see');
    expect(text).not.toContain('made_up_by_the_model');
    // every metric of the service and of the process collector is named cashcode_*
    for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) expect(line.startsWith('cashcode_')).toBe(true);
    expect(service.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});
