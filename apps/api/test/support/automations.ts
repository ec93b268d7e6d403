/** Helpers of the automations e2e suites: a complete automation body, REST calls, and polling the runs. */
import type { Automation, AutomationRun } from '@cashcode/contracts';

/** The members the suites read from the answers (an automation, a run, a page, a preview or a problem). */
export interface ApiJson extends Partial<Omit<Automation, 'schedule'>> {
  code?: string;
  errors?: Array<{ field: string; message: string }>;
  run?: AutomationRun;
  runs?: AutomationRun[];
  next_before?: string | null;
  automations?: Automation[];
  description?: string;
  next?: string[];
  schedule?: unknown;
}

const LLM = { provider: 'openai_compatible', model: 'fake-model' };

export function automationBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Test automation',
    prompt: 'Say hello.',
    schedule: { kind: 'once', at: new Date(Date.now() + 3_600_000).toISOString() },
    enabled: true,
    llm: LLM,
    tools: null,
    mcp_servers: null,
    skills: null,
    approvals: 'deny',
    budget: null,
    max_run_seconds: 60,
    chat_mode: 'single',
    missed: 'run_once',
    delivery: null,
    ...overrides,
  };
}

export async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; type: string; json: ApiJson }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', json: (text ? JSON.parse(text) : {}) as ApiJson };
}

/** Polls the runs of an automation until `done` says so (no fixed sleeps). */
export async function waitForRuns(base: string, id: string, done: (runs: AutomationRun[]) => boolean, timeoutMs = 15_000): Promise<AutomationRun[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const runs = (await api(base, 'GET', `/api/automations/${id}/runs?limit=200`)).json.runs as AutomationRun[];
    if (done(runs)) return runs;
    if (Date.now() > until) throw new Error(`runs never matched: ${JSON.stringify(runs)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

