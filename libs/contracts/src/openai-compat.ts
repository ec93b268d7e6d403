/**
 * REST types of the OpenAI-compatible endpoint's settings (`/api/settings/openai-compat`). The endpoint itself
 * (`/v1/models`, `/v1/chat/completions`) speaks the OpenAI wire format, not these types.
 */
import type { LlmSelection } from './llm-provider';

/** One access key of the OpenAI-compatible endpoint; the secret itself is shown once, when it is created. */
export interface OpenAiCompatKey {
  id: string;
  name: string;
  /** the first characters of the secret (`cck_ab12…`), to recognise it */
  prefix: string;
  /** local ISO-8601 with offset */
  created_at: string;
  /** local ISO-8601 with offset; null until the key is first used */
  last_used_at: string | null;
}

export interface OpenAiCompatSettings {
  /** off by default: `/v1/*` answers 404 (`endpoint_disabled`) until enabled */
  enabled: boolean;
  /** what the model id `cashcode` runs; null → the model the last turn used, else the background model */
  default_model: LlmSelection | null;
  /** add a short progress line (`[tool: name]`) to the answer for each tool call (default off) */
  tool_progress: boolean;
  /** run a request with a `user` field as a turn of the chat `openai-user-<sha256(user), 32 hex>` (default off) */
  map_user_to_chat: boolean;
  keys: OpenAiCompatKey[];
  /** whether the server's API token (CASHCODE_API_TOKEN) is also accepted as a key */
  api_token_accepted: boolean;
}

export interface UpdateOpenAiCompatSettingsRequest {
  enabled?: boolean;
  default_model?: LlmSelection | null;
  tool_progress?: boolean;
  map_user_to_chat?: boolean;
}

export interface CreateOpenAiCompatKeyRequest {
  name: string;
}

export interface CreatedOpenAiCompatKey {
  key: OpenAiCompatKey;
  /** the secret, shown only in this response (stored as a SHA-256 hash) */
  secret: string;
}
