/**
 * REST request and response shapes. Every error response is an RFC 9457 `application/problem+json` body
 * (ProblemDetails).
 */
import type { ExecSandboxStatus } from './approvals';
import type { ChannelMessageSource, SessionChannelInfo } from './channels';
import type { AttachmentReceipt } from './attachments';
import type { BrowserStatus } from './browser';
import type { LoadedSkillReceipt } from './skills';
import type { Money } from './usage';
import type { LlmProvider, LlmSelection } from './llm-provider';
import type { McpConnectorReceipt, SkillReceipt, TokenUsage } from './ws';

export interface ProblemFieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details plus `requestId`, `errors` for validation and `code` for domain errors. */
export interface ProblemDetails {
  /** problem type URI; `about:blank` when the status says it all */
  type: string;
  /** short summary of the problem type (the HTTP status phrase) */
  title: string;
  status: number;
  /** human-readable explanation, in English */
  detail: string;
  /** the request path (no query string) */
  instance?: string;
  /** same as the X-Request-ID response header */
  requestId?: string;
  /** per-field messages of a validation error */
  errors?: ProblemFieldError[];
  /** machine-readable code of a domain error (e.g. `skill_not_found`); clients localize by it */
  code?: string;
  /** additive (Skill import): the archive member a per-member rule refused, as stored in the archive */
  member?: string;
  /** additive (Skill import): the limit that member or archive exceeded (bytes or entries) */
  limit?: number;
  /** additive (Skill import, 409 `skill_conflict`): a built-in of that name exists; retry with `replace_builtin=true` */
  replace_builtin?: boolean;
  /** additive (Skill import, 422 `skill_archive_multiple`): the Skills found in the archive; retry with `select=<name>` */
  skills?: SkillArchiveCandidate[];
}

/** A Skill package found inside an uploaded archive (`SKILL.md` at `path`). */
export interface SkillArchiveCandidate {
  /** frontmatter name, or null when its SKILL.md does not parse */
  name: string | null;
  /** the package folder inside the archive (`skills-main/skills/pdf`), `''` for the archive root */
  path: string;
  description: string | null;
  /** why this package cannot be imported as it is (parse error); null when importable */
  error: string | null;
}

export interface HealthResponse {
  status: 'ok';
  service: 'cashcode';
  /** additive: whether exec commands run confined (absent on servers without the sandbox) */
  exec_sandbox?: ExecSandboxStatus;
  /** additive: whether the `browser` tool is offered, and how Chromium is confined */
  browser?: BrowserStatus;
}

/** `GET /api/client-config` (CashCode addition): where the console finds the WebSocket gateway. */
export interface ClientConfigResponse {
  /** the gateway's port (the HTTP port when the gateway shares the HTTP server) */
  ws_port: number;
  /** `/ws` when the gateway shares the HTTP server, else `/` */
  ws_path: string;
  /**
   * true unless the server runs with CASHCODE_AUTH=off: REST needs `Authorization: Bearer <token>` (the WS
   * `?token=<token>`) or the console's session cookie set by the sign-in link
   */
  token_required: boolean;
}

/** `GET /api/auth/session`: the client is signed in (a client that is not gets 401). */
export interface AuthSessionResponse {
  signed_in: true;
  /** `cookie`: the console's session cookie; `token`: the API token; `none`: the server runs with CASHCODE_AUTH=off */
  via: 'cookie' | 'token' | 'none';
}

// ---- sessions (openspec sessions) ----

export interface SessionSummary {
  chat_id: string;
  title: string;
  /** local YYYY-MM-DDTHH:MM:SS, no offset */
  updated_at: string;
  /** additive: the chat belongs to a channel conversation (its icon and the sender's name in the list) */
  channel?: SessionChannelInfo;
}
export interface SessionListResponse {
  sessions: SessionSummary[];
}
export interface PublicMessage {
  role: 'user' | 'assistant';
  content: string;
  /** additive (user rows): the message came through a channel (who sent it, through which account) */
  source?: ChannelMessageSource;
  mentioned_skills?: SkillReceipt[];
  selected_mcp_connectors?: McpConnectorReceipt[];
  /** additive: true on the partial assistant answer of a cancelled turn */
  cancelled?: boolean;
  /** additive (assistant rows): true when the model stopped at its output limit (`continue` carries on) */
  truncated?: boolean;
  /**
   * additive (user rows): Skills explicitly loaded for this turn, from the persisted receipts (shown as chips
   * on the user message, never as assistant bubbles)
   */
  loaded_skills?: LoadedSkillReceipt[];
  /**
   * additive (user rows): the turn of this message failed; `kind` is the code of the turn's `error` event (`auth`,
   * `rate_limit`, `transient`, …), `message` its safe English detail. Such a message was never answered: a retry sends
   * the prompt again as a new turn.
   */
  error?: PublicTurnError;
  /** additive (assistant rows): the tool calls the turn made before this answer, in order */
  tools?: PublicToolRecord[];
  /**
   * additive: the history cursor of the row's record (the `cursor` of an `edit` chat action). Rows of the current
   * branch only: records replaced by regenerate, edit or continue are not listed.
   */
  cursor?: number;
  /** additive (assistant rows): the turn's token usage, when the provider reported it */
  usage?: TokenUsage;
  /** additive (assistant rows): the turn's cost from the price table when the answer was recorded (absent: no price) */
  cost?: Money;
  /** additive (assistant rows): how long the turn took until the answer was complete, in ms */
  duration_ms?: number;
  /** additive (user rows): the files the message referred to (uploaded attachments) */
  attachments?: AttachmentReceipt[];
  /**
   * additive (assistant rows): the model's reasoning during the turn (thinking blocks, `reasoning_content`, `<think>`),
   * shown collapsed; never part of `content` and never sent back to the model in later turns
   */
  reasoning?: string;
}
export interface PublicTurnError {
  kind: string;
  message: string;
}
/** One persisted tool call as a reopened chat shows it (the same data as the live `tool_call`/`tool_result`). */
export interface PublicToolRecord {
  call_id: string;
  name: string;
  /** redacted, truncated argument JSON (as in `tool_call.arguments`) */
  arguments: string;
  /** the first 200 code points of the persisted result; null when the call has no result record */
  result_preview: string | null;
  /** null for a record written before `ok` was persisted, or without a result */
  ok: boolean | null;
  /** null when not recorded */
  duration_ms: number | null;
}
export interface SessionMessagesResponse {
  chat_id: string;
  messages: PublicMessage[];
}
/** additive: formats of `GET /api/sessions/{chat_id}/export?format=` (openspec sessions "Requirement: Export") */
export const SESSION_EXPORT_FORMATS = ['markdown', 'json'] as const;
export type SessionExportFormat = (typeof SESSION_EXPORT_FORMATS)[number];
/** additive: the body of `GET /api/sessions/{chat_id}/export?format=json` */
export interface SessionExportJson {
  /** always `cashcode.session-export` */
  format: 'cashcode.session-export';
  /** the export layout's version, 1 */
  version: 1;
  chat_id: string;
  title: string;
  /** when the export was made, ISO 8601 UTC */
  exported_at: string;
  /** the same projection as `GET /api/sessions/{chat_id}/messages` */
  messages: PublicMessage[];
}
/** additive: bounds of `GET /api/sessions/search` (openspec sessions "Requirement: Search") */
export const SESSION_SEARCH_QUERY_MAX_CHARS = 200;
export const SESSION_SEARCH_LIMIT_MAX = 20;
/** additive: one chat found by `GET /api/sessions/search?q=` */
export interface SessionSearchResult {
  chat_id: string;
  title: string;
  /** local YYYY-MM-DDTHH:MM:SS, no offset (as in the session list) */
  updated_at: string;
  /** `title` when the title contains the query, else `content` (a user or assistant message matched) */
  match: 'title' | 'content';
  /** content matches: a window of the best matching message, whitespace collapsed */
  snippet?: string;
  /** content matches: the role of that message */
  role?: 'user' | 'assistant';
}
export interface SessionSearchResponse {
  query: string;
  /** title matches first (newest first), then content matches (best first); one entry per chat */
  results: SessionSearchResult[];
}
export interface RenameSessionRequest {
  title: string;
}
export interface RenameSessionResponse {
  chat_id: string;
  title: string;
}

// ---- LLM settings (openspec llm-settings) ----

export interface PublicLlmSettings {
  configured: boolean;
  openai_compatible: { base_url: string; ready: boolean; api_key_configured: boolean };
  ollama: { base_url: string; ready: boolean };
  /**
   * additive: Anthropic's Messages API (`base_url` empty: not configured; the key is bound to the origin it was
   * entered for, like the OpenAI-compatible key). Always sent by the server.
   */
  anthropic?: { base_url: string; ready: boolean; api_key_configured: boolean };
  /** additive: models the user turned extended thinking on for (`PUT /api/settings/llm/thinking-models`); absent: none */
  thinking_models?: LlmSelection[];
  /** additive: the model background jobs (Dream) use; null → the last model a turn used (always sent by the server) */
  background?: LlmSelection | null;
  /**
   * additive: models the user marked as taking image input (`PUT /api/settings/llm/image-models`), for models whose
   * provider listing does not say so (absent when none is marked)
   */
  image_models?: LlmSelection[];
}
/** additive: `PUT /api/settings/llm/image-models` — mark one model as taking image input or not */
export interface SetImageModelRequest {
  provider: LlmProvider;
  model: string;
  accepts_images: boolean;
}
/** the answer of `PUT /api/settings/llm/image-models`: every marked model */
export interface ImageModelsResponse {
  image_models: LlmSelection[];
}
/** additive: `PUT /api/settings/llm/thinking-models` — turn extended thinking on or off for one model */
export interface SetThinkingModelRequest {
  provider: LlmProvider;
  model: string;
  thinking: boolean;
}
/** the answer of `PUT /api/settings/llm/thinking-models`: every model with thinking on */
export interface ThinkingModelsResponse {
  thinking_models: LlmSelection[];
}
export interface UpdateLlmSettingsRequest {
  openai_compatible: { base_url?: string; api_key?: string | null; clear_api_key?: boolean };
  ollama: { base_url?: string };
  /**
   * additive: omitted → the stored Anthropic connection is kept as it is; `base_url` empty → not configured. The key
   * follows the rules of `openai_compatible.api_key`.
   */
  anthropic?: { base_url?: string; api_key?: string | null; clear_api_key?: boolean };
  /** additive: omitted → keep the stored background model; null → clear it */
  background?: LlmSelection | null;
}
export interface TestLlmConnectionRequest extends UpdateLlmSettingsRequest {
  provider: LlmProvider;
}
export interface TestLlmConnectionResponse {
  success: true;
  provider: LlmProvider;
  model_count: number;
  message: string;
  /** additive: the model ids found, de-duplicated, in discovery order (`model_count` is their number) */
  models?: string[];
}
export interface LlmModelEntry {
  provider: LlmProvider;
  id: string;
  /**
   * additive: whether the model takes image input: the provider's listing says so (`vision` capability, an `image`
   * input modality), or the user marked it in the LLM settings; absent when not
   */
  accepts_images?: boolean;
  /** additive: true when the provider's listing itself says the model takes images (the setting is then not needed); absent when not */
  images_reported?: boolean;
}
export interface LlmProviderStatus {
  ready: boolean;
  error: string | null;
}
export interface LlmModelsResponse {
  models: LlmModelEntry[];
  providers: Record<LlmProvider, LlmProviderStatus>;
  /**
   * additive: the model the last chat turn on this server used (saved with the settings); a fresh browser preselects
   * it when it is listed. Absent before the first turn.
   */
  last_used?: LlmSelection;
}
