/**
 * The restricted evolver (openspec skill-evolution "Requirement: Proposal generation"): one non-streaming model call
 * without tools, whose only inputs are the `skill-creator` contract, bounded summaries of the existing Skills and the
 * redacted evidence, and whose reply is parsed strictly into a proposal draft. It can neither call tools nor touch
 * files; a person reviews what it proposes.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { LlmSelection, SkillEvolutionAction, SkillEvolutionEvidence } from '@cashcode/contracts';
import { isValidSkillName, SKILL_MD_MAX_BYTES, utf8ByteLength } from '@cashcode/skill-format';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LLM_CLIENT_PROVIDER, LlmNotConfiguredError, type LlmClientProvider } from '../llm-settings/llm-provider';
import { classifyProviderError } from '../llm-settings/provider-errors';
import { SpendLimitError } from '../usage/usage.errors';
import { UsageService, type UsageReservation } from '../usage/usage.service';
import { completeText } from '../llm-settings/text-completion';
import { truncateText } from './evidence';
import type { EvolutionSkillSummary } from './evolution-skills.port';

export const EVOLVER_SYSTEM_PROMPT =
  'You are a restricted Skill proposal generator. You cannot modify files or call tools.';

export const EVOLVER_RULES: readonly string[] = [
  'Reply with exactly one JSON object and nothing else: {"action": "create" or "update", "name": "<skill name>", ' +
    '"candidate_content": "<the complete SKILL.md>", "reason": "<one short sentence>"}.',
  'Propose a Skill only for the reusable workflow the evidence shows; describe it generically, without the values ' +
    'of one particular request.',
  'Use "update" only to improve an existing Skill whose source is "agent"; otherwise "create" a Skill with a name ' +
    'that is not taken.',
  'name must match ^[a-z0-9][a-z0-9._-]{0,63}$ and equal the frontmatter name of candidate_content.',
  'candidate_content starts with YAML frontmatter (name, description, optional display_name, tags, triggers, ' +
    'requires.tools) followed by a non-empty Markdown body.',
  'Never include secrets, credentials, personal data, chat identifiers or absolute paths.',
  'A person reviews the proposal before anything changes.',
];

/** Used when the built-in skill-creator Skill is not available. */
export const FALLBACK_CONTRACT =
  'A Skill is a directory named after the Skill containing SKILL.md: YAML frontmatter between --- lines with ' +
  '`name` (lowercase letters, digits, dots, underscores, hyphens) and a one-line `description` of when to use it, ' +
  'then a Markdown body with the step-by-step instructions an agent follows.';

export const CONTRACT_MAX_CHARS = 5000;
export const EXISTING_SKILLS_MAX = 80;
const SKILL_DESCRIPTION_MAX = 160;
const REASON_MAX = 500;
export const DEFAULT_REASON = 'Reusable workflow evidence';

export interface EvolverInput {
  contract: string | null;
  skills: readonly EvolutionSkillSummary[];
  /** the matching evidence, oldest first */
  evidence: readonly SkillEvolutionEvidence[];
  maxChars: number;
}

/**
 * The user message: JSON of {contract, existing_skills, evidence, rules}, at most `maxChars` characters. It is
 * shrunk as a whole JSON document (fewer skills, a shorter contract, shorter evidence texts), so the model always
 * gets valid JSON; only a budget too small for anything is cut hard.
 */
export function buildEvolverRequest(input: EvolverInput): string {
  let skills = input.skills.slice(0, EXISTING_SKILLS_MAX).map((skill) => ({
    name: skill.name,
    description: truncateText(skill.description, SKILL_DESCRIPTION_MAX),
    source: skill.source,
    version: skill.version,
  }));
  let contract = truncateText(input.contract ?? FALLBACK_CONTRACT, CONTRACT_MAX_CHARS);
  let evidence = input.evidence.map((record) => ({
    user: record.user,
    assistant: record.assistant,
    tools: record.tools,
    tool_calls: record.tool_calls,
    tool_receipts: record.tool_receipts,
  }));
  const render = () => JSON.stringify({ contract, existing_skills: skills, evidence, rules: EVOLVER_RULES });
  let text = render();
  while (text.length > input.maxChars && skills.length > 0) {
    skills = skills.slice(0, Math.floor(skills.length / 2));
    text = render();
  }
  if (text.length > input.maxChars) {
    evidence = evidence.map((record) => ({
      user: truncateText(record.user, 600),
      assistant: truncateText(record.assistant, 300),
      tools: record.tools,
      tool_calls: record.tool_calls
        .slice(0, 10)
        .map((call) => ({ name: call.name, arguments: truncateText(call.arguments, 100) })),
      tool_receipts: record.tool_receipts.slice(0, 10).map((receipt) => truncateText(receipt, 120)),
    }));
    text = render();
  }
  if (text.length > input.maxChars) {
    contract = truncateText(contract, Math.max(0, contract.length - (text.length - input.maxChars)));
    text = render();
  }
  while (text.length > input.maxChars && evidence.length > 1) {
    evidence = evidence.slice(1);
    text = render();
  }
  return text.length > input.maxChars ? text.slice(0, input.maxChars) : text;
}

export interface EvolverDraft {
  action: SkillEvolutionAction;
  name: string;
  candidate_content: string;
  reason: string;
}

export type EvolverReplyResult = { ok: true; draft: EvolverDraft } | { ok: false; reason: string };

const REPLY_KEYS = new Set(['action', 'name', 'candidate_content', 'reason']);
/** The whole reply, or the whole reply wrapped in one Markdown code fence. */
const FENCED = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/**
 * Strict parsing of the evolver's reply: one JSON object (optionally in a single code fence, nothing around it) with
 * exactly the keys action (`create`|`update`), name (a valid Skill name), candidate_content (non-blank, ≤ 80,000
 * bytes) and an optional reason (≤ 500 chars). Anything else is rejected with a short reason for the log.
 */
export function parseEvolverReply(reply: string): EvolverReplyResult {
  const fail = (reason: string): EvolverReplyResult => ({ ok: false, reason });
  let text = reply.trim();
  const fenced = FENCED.exec(text);
  if (fenced) text = (fenced[1] ?? '').trim();
  if (!text.startsWith('{')) return fail('not_json_object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('not_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not_json_object');
  const v = value as Record<string, unknown>;
  if (Object.keys(v).some((key) => !REPLY_KEYS.has(key))) return fail('unexpected_keys');
  const action = v['action'];
  if (action !== 'create' && action !== 'update') return fail('bad_action');
  const name = typeof v['name'] === 'string' ? v['name'].trim() : null;
  if (name === null || !isValidSkillName(name)) return fail('bad_name');
  const content = v['candidate_content'];
  if (typeof content !== 'string' || content.trim() === '') return fail('missing_content');
  if (utf8ByteLength(content) > SKILL_MD_MAX_BYTES) return fail('content_too_large');
  const rawReason = v['reason'];
  if (rawReason !== undefined && rawReason !== null && typeof rawReason !== 'string') return fail('bad_reason');
  const reason = typeof rawReason === 'string' ? rawReason.trim() : '';
  if (Array.from(reason).length > REASON_MAX) return fail('bad_reason');
  return { ok: true, draft: { action, name, candidate_content: content, reason: reason || DEFAULT_REASON } };
}

/** Why a model call produced no reply text. */
export class EvolverCallError extends Error {
  constructor(readonly kind: string) {
    super(`evolver model call failed: ${kind}`);
    this.name = 'EvolverCallError';
  }
}

/** The model call: a leased client of the turn's provider, no tools, no streaming, no SDK retries, a deadline. */
@Injectable()
export class Evolver {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LLM_CLIENT_PROVIDER) private readonly llm: LlmClientProvider,
    /** the usage ledger and spend limits (purpose `evolution`); without it (unit tests) nothing is checked */
    private readonly usage: UsageService,
  ) {}

  /**
   * The reply text ('' when the model sent none). Throws EvolverCallError (`spend_limit_reached` when a spend limit
   * refused the call: nothing was sent, the refusal is in the usage ledger).
   */
  async complete(selection: LlmSelection, request: string, signal: AbortSignal, chatId?: string): Promise<string> {
    let reservation: UsageReservation | undefined;
    try {
      reservation = this.usage.reserve({
        provider: selection.provider,
        model: selection.model,
        purpose: 'evolution',
        ...(chatId !== undefined ? { chatId } : {}),
        promptChars: EVOLVER_SYSTEM_PROMPT.length + request.length,
      });
    } catch (error) {
      if (error instanceof SpendLimitError) throw new EvolverCallError('spend_limit_reached');
      throw error;
    }
    const settle = (result: Parameters<UsageService['settle']>[1]) => {
      if (reservation) this.usage.settle(reservation, result);
    };
    let lease;
    try {
      lease = this.llm.acquire(selection.provider);
    } catch (error) {
      settle({ outcome: 'error', errorCode: 'not_configured' });
      if (error instanceof LlmNotConfiguredError) throw new EvolverCallError('not_configured');
      throw error;
    }
    const timeoutMs = this.config.backgroundModelTimeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    timer.unref();
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) controller.abort();
    try {
      const { text, usage } = await completeText(lease.client, {
        model: selection.model,
        system: EVOLVER_SYSTEM_PROMPT,
        user: request,
        signal: controller.signal,
        timeoutMs,
      });
      settle({ outcome: 'ok', usage, answerChars: text.length });
      return text;
    } catch (error) {
      if (timedOut) {
        settle({ outcome: 'error', errorCode: 'timeout' });
        throw new EvolverCallError('timeout');
      }
      if (controller.signal.aborted) {
        settle({ outcome: 'cancelled' });
        throw new EvolverCallError('cancelled');
      }
      const kind = classifyProviderError(error).kind;
      settle({ outcome: 'error', errorCode: kind });
      throw new EvolverCallError(kind);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      lease.release();
    }
  }
}
