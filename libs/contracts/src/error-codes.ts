/**
 * Every machine-readable error `code` the server sends: the `code` member of a REST problem+json body and the `code`
 * of a WS `error` event. Clients translate errors by these codes (the console has a `problem.<code>` message for each
 * one, checked by its unit tests) and fall back to the server's `detail` for a code they do not know. The API's own
 * unit tests check that each of its coded errors is listed here, so a new code cannot ship untranslated.
 *
 * Additive only: a code, once sent, is never renamed or removed.
 */
export const PROBLEM_CODES = [
  // memory and sessions
  'invalid_chat_id',
  'session_not_found',
  'memory_conflict',
  'soul_conflict',
  'dream_running',
  'dream_run_not_found',
  'dream_run_not_revertible',
  'dream_snapshot_missing',
  'memory_entry_not_found',
  'dream_run_not_held',
  'dream_proposal_stale',
  'trusted_source_invalid',
  // Skill evolution
  'proposal_not_found',
  'proposal_not_pending',
  'proposal_invalid',
  'skill_not_agent',
  'skill_changed',
  'skill_exists',
  'skill_publication',
  'unavailable',
  // Skills (REST problem codes are `skill_<code>`)
  'skill_permission',
  'skill_conflict',
  'skill_not_found',
  'skill_validation',
  'skill_archive_multiple',
  // MCP servers
  'permission',
  'conflict',
  'not_found',
  'validation',
  'connection',
  'storage',
  // LLM settings
  'settings_unreadable',
  'settings_save_failed',
  'invalid_settings',
  'no_provider_ready',
  'provider_not_ready',
  'connection_failed',
  'llm_not_configured',
  // approvals
  'rule_not_found',
  // chat attachments
  'multipart_invalid',
  'attachment_missing',
  'attachment_field_invalid',
  'attachment_empty',
  'attachment_invalid_name',
  'attachment_too_large',
  'attachments_too_large',
  'attachment_too_many',
  'attachment_not_found',
  // OpenAI-compatible API settings
  'key_not_found',
  'too_many_keys',
  // usage, prices and spend limits
  'invalid_usage_query',
  'invalid_usage_settings',
  'spend_limit_reached',
  // backups
  'backup_running',
  'backup_failed',
  // automations
  'invalid_automation',
  'invalid_schedule',
  'invalid_timezone',
  'invalid_budget',
  'unknown_tool',
  'unknown_mcp_server',
  'unknown_skill',
  'automation_running',
  'automation_save_failed',
  'invalid_delivery',
] as const;

/** The `code`s of WS `error` events that are not also REST problem codes. */
export const WS_ERROR_CODES = [
  // client frames the server refused
  'invalid_envelope',
  'too_deep',
  'missing_content',
  'invalid_selection_metadata',
  'invalid_frame',
  'unknown_type',
  'invalid_attachments',
  // chat actions (regenerate, edit, continue)
  'turn_running',
  'nothing_to_regenerate',
  'invalid_target',
  'nothing_to_continue',
  // approvals and elicitations
  'unknown_approval',
  'approval_failed',
  'unknown_elicitation',
  'invalid_elicitation',
  // turns
  'shutting_down',
  'queue_full',
  'llm_unavailable',
  'internal_error',
  // model calls (the provider error kind)
  'auth',
  'rate_limit',
  'quota',
  'timeout',
  'context_length',
  'transient',
  'fatal',
  'cancelled',
  // the runaway guard ended a turn whose model kept calling tools after it was told to answer
  'runaway_stopped',
  // a Skill tool error reported by its Skill error code
  'publication',
  // an automation run refused a model call: its budget per run was reached
  'budget_exceeded',
] as const;

export type ProblemCode = (typeof PROBLEM_CODES)[number];
export type WsErrorCode = (typeof WS_ERROR_CODES)[number];
export type ServerErrorCode = ProblemCode | WsErrorCode;

/** Every code of PROBLEM_CODES and WS_ERROR_CODES, once. */
export const SERVER_ERROR_CODES: readonly ServerErrorCode[] = [...new Set<ServerErrorCode>([...PROBLEM_CODES, ...WS_ERROR_CODES])];

export function isServerErrorCode(value: string): value is ServerErrorCode {
  return (SERVER_ERROR_CODES as readonly string[]).includes(value);
}

/**
 * Finer causes of a problem code, sent as the problem's additive `reason` member (with `member` / `limit` when the
 * cause has them); clients translate `<code>.<reason>` and fall back to the code's message, then to `detail`.
 */
export const PROBLEM_REASONS = {
  /** Skill ZIP import (`POST /api/skills/import`) */
  skill_validation: [
    'zip_missing',
    'zip_not_zip',
    'zip_too_large',
    'archive_invalid',
    'archive_empty',
    'archive_too_many_entries',
    'archive_illegal_path',
    'archive_unsupported_member',
    'archive_symlink',
    'archive_encrypted',
    'archive_duplicates',
    'archive_member_too_large',
    'archive_expands_too_much',
    'archive_file_dir_conflict',
    'archive_layout',
    'archive_outside',
    'archive_invalid_package_path',
    'archive_must_be_directory',
    'archive_file_too_large',
    'skill_md_not_utf8',
    'skill_md_invalid',
  ],
  /** LLM settings connection test (`POST /api/settings/llm/test`) */
  connection_failed: ['timeout', 'auth', 'connection', 'rate_limit', 'probe_generic'],
} as const;

export type ProblemReason<C extends keyof typeof PROBLEM_REASONS> = (typeof PROBLEM_REASONS)[C][number];
