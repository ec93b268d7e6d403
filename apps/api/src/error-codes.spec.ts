import { PROBLEM_CODES, SERVER_ERROR_CODES, WS_ERROR_CODES, type ServerErrorCode } from '@cashcode/contracts';
import { ModelCallError } from './agent/agent-runner';
import { AttachmentError, type AttachmentErrorCode } from './attachments/attachments.errors';
import { OpenAiCompatSettingsError, type OpenAiCompatSettingsErrorCode } from './openai-compat/openai-compat-settings.service';
import type { DecideResult } from './approvals/approvals.service';
import type { ChatActionCheck } from './chat/chat-actions';
import type { FrameRejectReason } from './chat/frame-parser';
import { EvolutionError, type EvolutionErrorCode } from './evolution/evolution.errors';
import { LlmNotConfiguredError, type ProviderErrorKind } from './llm-settings/llm-provider';
import { LlmSettingsError, type LlmSettingsErrorCode } from './llm-settings/llm-settings.errors';
import { McpError, type McpErrorCode } from './mcp/mcp.errors';
import { MemoryError, type MemoryErrorCode } from './memory/memory.errors';
import { SkillError, type SkillErrorCode } from './skills/skills.errors';
import { SpendLimitError, UsageError, type UsageErrorCode } from './usage/usage.errors';
import { BackupError, type BackupErrorCode } from './backup/backup.errors';
import { RunawayStoppedError } from './agent/runaway-guard';
import { ChannelError, type ChannelErrorCode } from './channels/channels.errors';
import { type DomainError, domainErrorEvent } from './common/domain-error';
import { toProblemInit } from './common/problem-details.filter';

/**
 * Each module's code union as a Record: adding a code to a union without adding it here fails the type check, and
 * the tests below then fail until the code is listed in the shared contracts (where the console's translations are
 * checked against it).
 */
const EVOLUTION: Record<EvolutionErrorCode, true> = {
  proposal_not_found: true,
  proposal_not_pending: true,
  proposal_invalid: true,
  skill_not_agent: true,
  skill_changed: true,
  skill_exists: true,
  skill_publication: true,
  unavailable: true,
};
const LLM_SETTINGS: Record<LlmSettingsErrorCode, true> = {
  settings_unreadable: true,
  settings_save_failed: true,
  invalid_settings: true,
  no_provider_ready: true,
  provider_not_ready: true,
  connection_failed: true,
};
const MCP: Record<McpErrorCode, true> = {
  permission: true,
  conflict: true,
  not_found: true,
  validation: true,
  connection: true,
  storage: true,
};
const MEMORY: Record<MemoryErrorCode, true> = {
  invalid_chat_id: true,
  session_not_found: true,
  memory_conflict: true,
  soul_conflict: true,
  dream_running: true,
  dream_run_not_found: true,
  dream_run_not_revertible: true,
  dream_snapshot_missing: true,
  dream_run_not_held: true,
  dream_proposal_stale: true,
  memory_entry_not_found: true,
};
const SKILLS: Record<SkillErrorCode, true> = { permission: true, conflict: true, not_found: true, validation: true, publication: true };
const PROVIDER: Record<ProviderErrorKind, true> = {
  auth: true,
  rate_limit: true,
  quota: true,
  timeout: true,
  context_length: true,
  transient: true,
  fatal: true,
  cancelled: true,
};
const FRAME_REJECTS: Record<FrameRejectReason, true> = {
  invalid_envelope: true,
  too_deep: true,
  invalid_chat_id: true,
  missing_content: true,
  invalid_selection_metadata: true,
  invalid_frame: true,
  unknown_type: true,
  invalid_attachments: true,
};
const ATTACHMENTS: Record<AttachmentErrorCode, true> = {
  multipart_invalid: true,
  attachment_missing: true,
  attachment_field_invalid: true,
  attachment_empty: true,
  attachment_invalid_name: true,
  attachment_too_large: true,
  attachments_too_large: true,
  attachment_too_many: true,
  attachment_not_found: true,
};
const USAGE: Record<UsageErrorCode, true> = { invalid_usage_query: true, invalid_usage_settings: true, settings_save_failed: true };
const BACKUP: Record<BackupErrorCode, true> = { backup_running: true, backup_failed: true };
const CHANNELS: Record<ChannelErrorCode, true> = { validation: true, not_found: true };
const OPENAI_COMPAT_SETTINGS: Record<OpenAiCompatSettingsErrorCode, true> = { key_not_found: true, too_many_keys: true, settings_save_failed: true };
const CHAT_ACTION_REFUSALS: Record<Extract<ChatActionCheck, { ok: false }>['code'] | 'turn_running', true> = {
  turn_running: true,
  nothing_to_regenerate: true,
  invalid_target: true,
  nothing_to_continue: true,
};
const APPROVAL_FAILURES: Record<Extract<DecideResult, { ok: false }>['code'], true> = { unknown_approval: true, approval_failed: true };
/** codes sent as plain strings (chat service, elicitations, the approvals controller, a Skill's finer problem code) */
const PLAIN_CODES = [
  'shutting_down',
  'queue_full',
  'llm_unavailable',
  'internal_error',
  'unknown_elicitation',
  'invalid_elicitation',
  'rule_not_found',
  'skill_archive_multiple',
];

function codes<T extends string>(record: Record<T, true>): T[] {
  return Object.keys(record) as T[];
}

/** every coded domain error the API can raise, one per code */
function domainErrors(): DomainError[] {
  return [
    ...codes(EVOLUTION).map((code) => new EvolutionError(code, 'x')),
    ...codes(LLM_SETTINGS).map((code) => new LlmSettingsError(code, 'x')),
    ...codes(MCP).map((code) => new McpError(code, 'x')),
    ...codes(MEMORY).map((code) => new MemoryError(code)),
    ...codes(ATTACHMENTS).map((code) => new AttachmentError(code, 'x')),
    ...codes(OPENAI_COMPAT_SETTINGS).map((code) => new OpenAiCompatSettingsError(code, 'x')),
    ...codes(SKILLS).map((code) => new SkillError(code, 'x')),
    ...codes(PROVIDER).map((kind) => new ModelCallError({ kind, retryable: false, retryAfterMs: null, message: 'x' })),
    ...codes(USAGE).map((code) => new UsageError(code, 'x')),
    ...codes(BACKUP).map((code) => new BackupError(code, 'x')),
    ...codes(CHANNELS).map((code) => new ChannelError(code, 'x')),
    new SpendLimitError({
      id: 'day',
      scope: 'global',
      window: 'day',
      unit: 'tokens',
      amount: 1,
      used: 1,
      reserved: 0,
      share: 1,
      state: 'reached',
      resets_at: '2026-01-02T00:00:00+00:00',
    }),
    new LlmNotConfiguredError(null),
    new RunawayStoppedError({ reason: 'repeated_call', tool: 'read_file', count: 3 }),
  ];
}

describe('server error codes (shared contracts)', () => {
  const known = new Set<string>(SERVER_ERROR_CODES);

  it('Scenario: every REST problem code the API can send is listed in the shared contracts', () => {
    const problemCodes = new Set<string>(PROBLEM_CODES);
    const missing = domainErrors()
      .map((error) => toProblemInit(error)?.code)
      .filter((code): code is string => code !== undefined && !problemCodes.has(code) && !known.has(code));
    expect(missing).toEqual([]);
    expect(PLAIN_CODES.filter((code) => !known.has(code))).toEqual([]);
  });

  it('Scenario: every WS error code the API can send is listed in the shared contracts', () => {
    const wsCodes = [
      ...domainErrors().map((error) => domainErrorEvent(error).code),
      ...codes(FRAME_REJECTS),
      ...codes(APPROVAL_FAILURES),
      ...codes(CHAT_ACTION_REFUSALS),
    ];
    expect(wsCodes.filter((code) => !known.has(code))).toEqual([]);
  });

  it('lists each code once', () => {
    const all: ServerErrorCode[] = [...PROBLEM_CODES, ...WS_ERROR_CODES];
    expect(new Set(all).size).toBe(all.length);
    expect(SERVER_ERROR_CODES).toHaveLength(all.length);
  });
});
