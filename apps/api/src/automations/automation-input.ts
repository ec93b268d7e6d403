/**
 * The editable fields of an automation, checked (openspec automations "Requirement: Clear errors for bad input"): each
 * problem becomes a field error and the first one's class picks the problem code (`invalid_schedule`,
 * `invalid_timezone`, `invalid_budget`, else `invalid_automation`). Absent optional fields get their defaults. Whether
 * the named tools, MCP servers and Skills exist is asked afterwards (automation-tools.ts), as it needs the server.
 */
import {
  AUTOMATION_DEFAULT_MAX_RUN_SECONDS,
  AUTOMATION_MAX_NAME_CHARS,
  AUTOMATION_MAX_PROMPT_CHARS,
  AUTOMATION_MAX_RUN_SECONDS,
  LLM_PROVIDERS,
  codePointLength,
  type AutomationBudget,
  type AutomationDelivery,
  type AutomationInput,
  type LlmSelection,
} from '@cashcode/contracts';
import type { ProblemFieldError } from '../common/problem-details';
import { checkSchedule } from './automation-schedule';
import { AutomationError, type AutomationErrorCode } from './automations.errors';

const FIELDS = new Set([
  'name',
  'prompt',
  'schedule',
  'enabled',
  'llm',
  'tools',
  'mcp_servers',
  'skills',
  'approvals',
  'budget',
  'max_run_seconds',
  'chat_mode',
  'missed',
  'delivery',
]);
/** read-only members a client may send back unchanged (a GET result used as a PUT body): ignored */
const READ_ONLY = new Set(['id', 'source', 'created_at', 'updated_at', 'next_run_at', 'last_run', 'running']);
const MAX_NAMES = 100;
const NAME_PATTERN = /^[\w.:/@-]{1,128}$/;

interface Problems {
  code: AutomationErrorCode | null;
  errors: ProblemFieldError[];
}

function add(problems: Problems, code: AutomationErrorCode, field: string, message: string): void {
  problems.code ??= code;
  problems.errors.push({ field, message });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(problems: Problems, body: Record<string, unknown>, field: string, max: number): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '' || codePointLength(value) > max) {
    add(problems, 'invalid_automation', field, `must be text of 1 to ${max} characters`);
    return '';
  }
  return field === 'name' ? value.trim() : value;
}

function oneOf<T extends string>(problems: Problems, body: Record<string, unknown>, field: string, allowed: readonly T[], fallback: T): T {
  const value = body[field];
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  add(problems, 'invalid_automation', field, `must be one of ${allowed.map((option) => `'${option}'`).join(', ')}`);
  return fallback;
}

function names(problems: Problems, body: Record<string, unknown>, field: string): string[] | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length > MAX_NAMES || !value.every((name) => typeof name === 'string' && NAME_PATTERN.test(name))) {
    add(problems, 'invalid_automation', field, `must be null (all) or a list of at most ${MAX_NAMES} names`);
    return null;
  }
  return [...new Set(value as string[])];
}

function llm(problems: Problems, value: unknown): LlmSelection | null {
  if (value === undefined || value === null) return null;
  if (
    isRecord(value) &&
    typeof value['provider'] === 'string' &&
    (LLM_PROVIDERS as readonly string[]).includes(value['provider']) &&
    typeof value['model'] === 'string' &&
    value['model'].trim() !== '' &&
    value['model'].length <= 200
  ) {
    return { provider: value['provider'] as LlmSelection['provider'], model: value['model'].trim() };
  }
  add(problems, 'invalid_automation', 'llm', 'must be null (the default model) or { provider, model }');
  return null;
}

function budget(problems: Problems, value: unknown): AutomationBudget | null {
  if (value === undefined || value === null) return null;
  const positive = (amount: unknown, integer: boolean) =>
    typeof amount === 'number' && Number.isFinite(amount) && amount > 0 && (!integer || Number.isInteger(amount));
  if (!isRecord(value) || Object.keys(value).some((key) => key !== 'tokens' && key !== 'usd')) {
    add(problems, 'invalid_budget', 'budget', 'must be null or { tokens?, usd? }');
    return null;
  }
  const out: AutomationBudget = {};
  if (value['tokens'] !== undefined) {
    if (positive(value['tokens'], true)) out.tokens = value['tokens'] as number;
    else add(problems, 'invalid_budget', 'budget.tokens', 'must be a whole number of tokens greater than 0');
  }
  if (value['usd'] !== undefined) {
    if (positive(value['usd'], false)) out.usd = value['usd'] as number;
    else add(problems, 'invalid_budget', 'budget.usd', 'must be an amount of US dollars greater than 0');
  }
  if (value['tokens'] === undefined && value['usd'] === undefined) add(problems, 'invalid_budget', 'budget', 'must set tokens, usd or both (or be null)');
  return out;
}

function delivery(problems: Problems, value: unknown): AutomationDelivery | null {
  if (value === undefined || value === null) return null;
  const channel = isRecord(value) ? value['channel'] : undefined;
  if (isRecord(value) && Object.keys(value).every((key) => key === 'channel') && channel === undefined) return {};
  if (
    isRecord(value) &&
    Object.keys(value).every((key) => key === 'channel') &&
    isRecord(channel) &&
    channel['kind'] === 'telegram' &&
    typeof channel['chat_id'] === 'string' &&
    /^-?\d{1,20}$|^@\w{1,64}$/.test(channel['chat_id'])
  ) {
    return { channel: { kind: 'telegram', chat_id: channel['chat_id'] } };
  }
  add(problems, 'invalid_automation', 'delivery', "must be null or { channel: { kind: 'telegram', chat_id } }");
  return null;
}

/** The checked input; throws AutomationError with every field error. */
export function parseAutomationInput(body: unknown, minIntervalSec: number): AutomationInput {
  const problems: Problems = { code: null, errors: [] };
  if (!isRecord(body)) throw new AutomationError('invalid_automation', 'The automation must be a JSON object.', [{ field: '', message: 'must be an object' }]);
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key) && !READ_ONLY.has(key)) add(problems, 'invalid_automation', key, 'is not a field of an automation');
  }
  const schedule = checkSchedule(body['schedule'], minIntervalSec);
  if (!schedule.ok) {
    problems.code = schedule.code;
    problems.errors.unshift(...schedule.errors);
  }
  const maxRun = body['max_run_seconds'] ?? AUTOMATION_DEFAULT_MAX_RUN_SECONDS;
  if (typeof maxRun !== 'number' || !Number.isInteger(maxRun) || maxRun < 1 || maxRun > AUTOMATION_MAX_RUN_SECONDS) {
    add(problems, 'invalid_automation', 'max_run_seconds', `must be a whole number of seconds from 1 to ${AUTOMATION_MAX_RUN_SECONDS}`);
  }
  const enabled = body['enabled'] ?? true;
  if (typeof enabled !== 'boolean') add(problems, 'invalid_automation', 'enabled', 'must be true or false');
  const input: AutomationInput = {
    name: text(problems, body, 'name', AUTOMATION_MAX_NAME_CHARS),
    prompt: text(problems, body, 'prompt', AUTOMATION_MAX_PROMPT_CHARS),
    schedule: schedule.ok ? schedule.schedule : { kind: 'interval', every_seconds: 0 },
    enabled: enabled === true,
    llm: llm(problems, body['llm']),
    tools: names(problems, body, 'tools'),
    mcp_servers: names(problems, body, 'mcp_servers'),
    skills: names(problems, body, 'skills'),
    approvals: oneOf(problems, body, 'approvals', ['wait', 'deny'] as const, 'deny'),
    budget: budget(problems, body['budget']),
    max_run_seconds: typeof maxRun === 'number' ? maxRun : AUTOMATION_DEFAULT_MAX_RUN_SECONDS,
    chat_mode: oneOf(problems, body, 'chat_mode', ['single', 'per_run'] as const, 'single'),
    missed: oneOf(problems, body, 'missed', ['run_once', 'skip'] as const, 'run_once'),
    delivery: delivery(problems, body['delivery']),
  };
  if (problems.code !== null) {
    const first = problems.errors[0] as ProblemFieldError;
    throw new AutomationError(problems.code, `${first.field}: ${first.message}`, problems.errors);
  }
  return input;
}
