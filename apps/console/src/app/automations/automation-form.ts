/**
 * The automation editor's rules (openspec console "Requirement: Automations page"), pure and testable: the draft the
 * form edits (text as typed), its checks before anything is sent, the request body it becomes, the schedule it
 * previews, and where a problem's field errors are shown.
 */
import {
  AUTOMATION_DEFAULT_MAX_RUN_SECONDS,
  AUTOMATION_MAX_NAME_CHARS,
  AUTOMATION_MAX_PROMPT_CHARS,
  AUTOMATION_MAX_RUN_SECONDS,
  type Automation,
  type AutomationApprovals,
  type AutomationChatMode,
  type AutomationInput,
  type AutomationMissedPolicy,
  type AutomationSchedule,
  type AutomationScheduleKind,
  type LlmSelection,
  type ProblemFieldError,
} from '@cashcode/contracts';

import { localDateTimeValue, zonedIso } from './automation-time';

export type IntervalUnit = 'minutes' | 'hours' | 'days';

const UNIT_SECONDS: Record<IntervalUnit, number> = { minutes: 60, hours: 3600, days: 86_400 };

/** The editor's fields, as typed. */
export interface AutomationDraft {
  name: string;
  prompt: string;
  scheduleKind: AutomationScheduleKind;
  cronExpression: string;
  /** IANA time zone of a cron schedule, and the zone a `once` date is typed in */
  timezone: string;
  intervalValue: string;
  intervalUnit: IntervalUnit;
  /** `YYYY-MM-DDTHH:mm` (a datetime-local value) in `timezone` */
  onceAt: string;
  enabled: boolean;
  /** `provider/model`; '' for the default model */
  model: string;
  /** null: every tool the agent may use */
  tools: string[] | null;
  approvals: AutomationApprovals;
  budgetTokens: string;
  budgetUsd: string;
  maxRunMinutes: string;
  chatMode: AutomationChatMode;
  missed: AutomationMissedPolicy;
  /** kept as they were (the editor does not change them) */
  mcpServers: string[] | null;
  skills: string[] | null;
  delivery: AutomationInput['delivery'];
}

/** The draft's fields that can show an error. */
export type DraftField = 'name' | 'prompt' | 'schedule' | 'model' | 'tools' | 'budget' | 'maxRun' | 'delivery' | 'form';

/** Client-side checks: an i18n key per field. */
export type DraftErrors = Partial<Record<DraftField, string>>;

export function modelKey(selection: LlmSelection | null): string {
  return selection ? `${selection.provider}/${selection.model}` : '';
}

function parseModelKey(key: string): LlmSelection | null {
  const slash = key.indexOf('/');
  if (key === '' || slash <= 0) return null;
  return { provider: key.slice(0, slash) as LlmSelection['provider'], model: key.slice(slash + 1) };
}

/** The draft of a new automation: every weekday at 08:00 in the browser's time zone, the default model. */
export function newDraft(timezone: string): AutomationDraft {
  return {
    name: '',
    prompt: '',
    scheduleKind: 'cron',
    cronExpression: '0 8 * * 1-5',
    timezone,
    intervalValue: '1',
    intervalUnit: 'hours',
    onceAt: '',
    enabled: true,
    model: '',
    tools: null,
    approvals: 'deny',
    budgetTokens: '',
    budgetUsd: '',
    maxRunMinutes: String(AUTOMATION_DEFAULT_MAX_RUN_SECONDS / 60),
    chatMode: 'single',
    missed: 'run_once',
    mcpServers: null,
    skills: null,
    delivery: null,
  };
}

/** The draft of an existing automation. */
export function draftOf(automation: Automation, fallbackZone: string): AutomationDraft {
  const draft = newDraft(fallbackZone);
  const schedule = automation.schedule;
  if (schedule.kind === 'cron') {
    draft.cronExpression = schedule.expression;
    draft.timezone = schedule.timezone;
  } else if (schedule.kind === 'interval') {
    const unit = (['days', 'hours', 'minutes'] as const).find((u) => schedule.every_seconds % UNIT_SECONDS[u] === 0) ?? 'minutes';
    draft.intervalUnit = unit;
    draft.intervalValue = String(Math.max(1, Math.round(schedule.every_seconds / UNIT_SECONDS[unit])));
  } else {
    draft.onceAt = localDateTimeValue(schedule.at, fallbackZone);
  }
  return {
    ...draft,
    name: automation.name,
    prompt: automation.prompt,
    scheduleKind: schedule.kind,
    enabled: automation.enabled,
    model: modelKey(automation.llm),
    tools: automation.tools ? [...automation.tools] : null,
    approvals: automation.approvals,
    budgetTokens: automation.budget?.tokens !== undefined ? String(automation.budget.tokens) : '',
    budgetUsd: automation.budget?.usd !== undefined ? String(automation.budget.usd) : '',
    maxRunMinutes: String(Math.round((automation.max_run_seconds / 60) * 100) / 100),
    chatMode: automation.chat_mode,
    missed: automation.missed,
    mcpServers: automation.mcp_servers,
    skills: automation.skills,
    delivery: automation.delivery,
  };
}

function positiveNumber(text: string): number | null {
  const value = Number(text.trim());
  return text.trim() !== '' && Number.isFinite(value) && value > 0 ? value : null;
}

/** The schedule the draft describes, or null while it is incomplete (nothing to preview). */
export function draftSchedule(draft: AutomationDraft): AutomationSchedule | null {
  switch (draft.scheduleKind) {
    case 'cron':
      return draft.cronExpression.trim() === '' ? null : { kind: 'cron', expression: draft.cronExpression.trim(), timezone: draft.timezone };
    case 'interval': {
      const value = positiveNumber(draft.intervalValue);
      return value === null ? null : { kind: 'interval', every_seconds: Math.round(value * UNIT_SECONDS[draft.intervalUnit]) };
    }
    case 'once': {
      const at = draft.onceAt === '' ? null : zonedIso(draft.onceAt, draft.timezone);
      return at === null ? null : { kind: 'once', at };
    }
  }
}

/** The checks made before sending (the server checks everything again). */
export function checkDraft(draft: AutomationDraft): DraftErrors {
  const errors: DraftErrors = {};
  if (draft.name.trim() === '') errors.name = 'automations.error.required';
  else if ([...draft.name.trim()].length > AUTOMATION_MAX_NAME_CHARS) errors.name = 'automations.error.tooLong';
  if (draft.prompt.trim() === '') errors.prompt = 'automations.error.required';
  else if ([...draft.prompt].length > AUTOMATION_MAX_PROMPT_CHARS) errors.prompt = 'automations.error.tooLong';
  if (draftSchedule(draft) === null) {
    errors.schedule = draft.scheduleKind === 'interval' ? 'automations.error.interval' : 'automations.error.schedule';
  }
  if (draft.tools !== null && draft.tools.length === 0) errors.tools = 'automations.error.noTools';
  if ((draft.budgetTokens.trim() !== '' && positiveNumber(draft.budgetTokens) === null) || (draft.budgetUsd.trim() !== '' && positiveNumber(draft.budgetUsd) === null)) {
    errors.budget = 'automations.error.positive';
  }
  const minutes = positiveNumber(draft.maxRunMinutes);
  if (minutes === null || minutes * 60 > AUTOMATION_MAX_RUN_SECONDS) errors.maxRun = 'automations.error.maxRun';
  return errors;
}

/** The request body of a checked draft (POST, or PUT's full replace). */
export function draftInput(draft: AutomationDraft): AutomationInput {
  const schedule = draftSchedule(draft);
  if (schedule === null) throw new Error('the draft has no schedule');
  const tokens = positiveNumber(draft.budgetTokens);
  const usd = positiveNumber(draft.budgetUsd);
  return {
    name: draft.name.trim(),
    prompt: draft.prompt,
    schedule,
    enabled: draft.enabled,
    llm: parseModelKey(draft.model),
    tools: draft.tools ? [...draft.tools] : null,
    mcp_servers: draft.mcpServers,
    skills: draft.skills,
    approvals: draft.approvals,
    budget: tokens === null && usd === null ? null : { ...(tokens !== null ? { tokens: Math.round(tokens) } : {}), ...(usd !== null ? { usd } : {}) },
    max_run_seconds: Math.round(Number(draft.maxRunMinutes) * 60),
    chat_mode: draft.chatMode,
    missed: draft.missed,
    delivery: draft.delivery,
  };
}

/** An automation's editable fields (e.g. to pause it: the same body with `enabled` flipped). */
export function automationInput(automation: Automation): AutomationInput {
  return {
    name: automation.name,
    prompt: automation.prompt,
    schedule: automation.schedule,
    enabled: automation.enabled,
    llm: automation.llm,
    tools: automation.tools,
    mcp_servers: automation.mcp_servers,
    skills: automation.skills,
    approvals: automation.approvals,
    budget: automation.budget,
    max_run_seconds: automation.max_run_seconds,
    chat_mode: automation.chat_mode,
    missed: automation.missed,
    delivery: automation.delivery,
  };
}

/** The editor field a problem's field path belongs to (`schedule.expression` → schedule, `budget.usd` → budget). */
export function fieldOfPath(path: string): DraftField {
  const head = path.split(/[.[]/, 1)[0] ?? '';
  switch (head) {
    case 'name':
    case 'prompt':
    case 'schedule':
    case 'tools':
    case 'budget':
    case 'delivery':
      return head;
    case 'llm':
      return 'model';
    case 'max_run_seconds':
      return 'maxRun';
    default:
      return 'form';
  }
}

/** The problem codes that belong to one field even when the server sent no field errors. */
const CODE_FIELDS: Readonly<Record<string, DraftField>> = {
  invalid_schedule: 'schedule',
  invalid_timezone: 'schedule',
  invalid_budget: 'budget',
  unknown_tool: 'tools',
  invalid_delivery: 'delivery',
};

/**
 * A refused save or preview, shown at the fields: each field error at its field (several joined), else the problem's
 * message at the field its code names, else at the form.
 */
export function problemFieldErrors(fieldErrors: readonly ProblemFieldError[], code: string | undefined, detail: string): Partial<Record<DraftField, string>> {
  const out: Partial<Record<DraftField, string>> = {};
  for (const error of fieldErrors) {
    const field = fieldOfPath(error.field);
    const text = field === 'form' ? `${error.field}: ${error.message}` : error.message;
    out[field] = out[field] ? `${out[field]}; ${text}` : text;
  }
  if (Object.keys(out).length === 0) out[(code !== undefined ? CODE_FIELDS[code] : undefined) ?? 'form'] = detail;
  return out;
}
