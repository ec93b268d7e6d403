/**
 * Validation of a `POST /v1/chat/completions` body, the way OpenAI answers it: a 400 `invalid_request_error` naming
 * the offending `param` for a missing or mistyped field; fields CashCode does not use (`tools`, `top_p`, `seed`,
 * `response_format`, vendor extensions, …) are ignored, as OpenAI ignores unknown ones. Content may be a string or an
 * array of text parts; images and audio are refused (the agent's model input is text).
 */
import type { ChatMessage, ToolCallRecord } from '../common/chat-message';
import { invalidRequest, type OpenAiError } from '../common/openai-error';

/** messages a request may carry */
export const MAX_REQUEST_MESSAGES = 2_000;
/** longest `user` field (OpenAI documents 256 characters of end-user id) */
export const MAX_USER_CHARS = 256;

export interface CompletionRequest {
  model: string;
  /** the conversation, system/developer messages as `system` */
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  temperature?: number;
  maxTokens?: number;
  user?: string;
}

export type ParseResult = { ok: true; request: CompletionRequest } | { ok: false; error: OpenAiError };

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

class Invalid extends Error {
  constructor(readonly error: OpenAiError) {
    super(error.message);
  }
}

function fail(code: string, message: string, param: string): never {
  throw new Invalid(invalidRequest(code, message, param));
}

/** The text of a message's content: a string, or the concatenated text parts of an array. */
function contentText(value: unknown, param: string, nullable: boolean): string {
  if (typeof value === 'string') return value;
  if ((value === null || value === undefined) && nullable) return '';
  if (value === undefined) fail('missing_required_parameter', `Missing required parameter: '${param}'.`, param);
  if (!Array.isArray(value)) {
    fail('invalid_type', `Invalid type for '${param}': expected a string or an array of content parts, but got ${describe(value)}.`, param);
  }
  const texts: string[] = [];
  value.forEach((part: unknown, index) => {
    const partParam = `${param}[${index}]`;
    if (!isRecord(part) || typeof part['type'] !== 'string') {
      fail('invalid_type', `Invalid content part '${partParam}': expected an object with a 'type'.`, partParam);
    }
    if (part['type'] === 'text') {
      if (typeof part['text'] !== 'string') {
        fail('invalid_type', `Invalid type for '${partParam}.text': expected a string, but got ${describe(part['text'])}.`, `${partParam}.text`);
      }
      texts.push(part['text']);
      return;
    }
    fail(
      'unsupported_content',
      `Content parts of type '${String(part['type'])}' are not supported: the CashCode agent takes text only.`,
      `${partParam}.type`,
    );
  });
  return texts.join('\n');
}

function toolCalls(value: unknown, param: string): ToolCallRecord[] {
  if (!Array.isArray(value)) fail('invalid_type', `Invalid type for '${param}': expected an array, but got ${describe(value)}.`, param);
  return value.map((call: unknown, index): ToolCallRecord => {
    const callParam = `${param}[${index}]`;
    const fn = isRecord(call) ? call['function'] : undefined;
    if (!isRecord(call) || typeof call['id'] !== 'string' || !isRecord(fn) || typeof fn['name'] !== 'string') {
      fail('invalid_type', `Invalid tool call '${callParam}': expected { id, type: 'function', function: { name, arguments } }.`, callParam);
    }
    const args = fn['arguments'];
    return { id: call['id'], type: 'function', function: { name: fn['name'], arguments: typeof args === 'string' ? args : '{}' } };
  });
}

function message(value: unknown, index: number): ChatMessage {
  const param = `messages[${index}]`;
  if (!isRecord(value)) fail('invalid_type', `Invalid type for '${param}': expected an object, but got ${describe(value)}.`, param);
  const role = value['role'];
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    fail(
      'invalid_value',
      `Invalid value for '${param}.role': expected one of ${ROLES.map((r) => `'${r}'`).join(', ')}.`,
      `${param}.role`,
    );
  }
  switch (role as (typeof ROLES)[number]) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(value['content'], `${param}.content`, false) };
    case 'user':
      return { role: 'user', content: contentText(value['content'], `${param}.content`, false) };
    case 'assistant': {
      const calls = value['tool_calls'] === undefined || value['tool_calls'] === null ? [] : toolCalls(value['tool_calls'], `${param}.tool_calls`);
      const content = contentText(value['content'], `${param}.content`, true);
      return calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content };
    }
    case 'tool': {
      const callId = value['tool_call_id'];
      if (typeof callId !== 'string' || callId === '') {
        fail('missing_required_parameter', `Missing required parameter: '${param}.tool_call_id'.`, `${param}.tool_call_id`);
      }
      return { role: 'tool', content: contentText(value['content'], `${param}.content`, false), tool_call_id: callId, name: '' };
    }
  }
}

function optionalNumber(body: Record<string, unknown>, name: string, min: number, max: number, integer: boolean): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    fail('invalid_type', `Invalid type for '${name}': expected ${integer ? 'an integer' : 'a number'}, but got ${describe(value)}.`, name);
  }
  if (value < min || value > max) fail('invalid_value', `Invalid '${name}': must be between ${min} and ${max}.`, name);
  return value;
}

/** Parses a request body; never throws. */
export function parseCompletionRequest(body: unknown): ParseResult {
  try {
    return { ok: true, request: parse(body) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, error: err.error };
    throw err;
  }
}

function parse(body: unknown): CompletionRequest {
  if (!isRecord(body)) {
    fail('invalid_json', `The request body must be a JSON object, but got ${describe(body)}.`, 'body');
  }
  const model = body['model'];
  if (model === undefined || model === null) fail('missing_required_parameter', "Missing required parameter: 'model'.", 'model');
  if (typeof model !== 'string' || model.trim() === '') {
    fail('invalid_type', `Invalid type for 'model': expected a non-empty string, but got ${describe(model)}.`, 'model');
  }
  const rawMessages = body['messages'];
  if (rawMessages === undefined || rawMessages === null) {
    fail('missing_required_parameter', "Missing required parameter: 'messages'.", 'messages');
  }
  if (!Array.isArray(rawMessages)) {
    fail('invalid_type', `Invalid type for 'messages': expected an array, but got ${describe(rawMessages)}.`, 'messages');
  }
  if (rawMessages.length === 0) fail('invalid_value', "Invalid 'messages': expected an array with at least one message.", 'messages');
  if (rawMessages.length > MAX_REQUEST_MESSAGES) {
    fail('invalid_value', `Invalid 'messages': at most ${MAX_REQUEST_MESSAGES} messages are accepted.`, 'messages');
  }
  const messages = rawMessages.map((value: unknown, index) => message(value, index));

  const stream = body['stream'];
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    fail('invalid_type', `Invalid type for 'stream': expected a boolean, but got ${describe(stream)}.`, 'stream');
  }
  const options = body['stream_options'];
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (!isRecord(options)) {
      fail('invalid_type', `Invalid type for 'stream_options': expected an object, but got ${describe(options)}.`, 'stream_options');
    }
    const include = options['include_usage'];
    if (include !== undefined && include !== null && typeof include !== 'boolean') {
      fail('invalid_type', `Invalid type for 'stream_options.include_usage': expected a boolean, but got ${describe(include)}.`, 'stream_options.include_usage');
    }
    includeUsage = include === true;
  }
  const n = body['n'];
  if (n !== undefined && n !== null && n !== 1) {
    fail('invalid_value', "Invalid 'n': the CashCode agent gives one answer per request; n must be 1 or absent.", 'n');
  }
  const temperature = optionalNumber(body, 'temperature', 0, 2, false);
  const maxCompletion = optionalNumber(body, 'max_completion_tokens', 1, 1_000_000, true);
  const maxTokens = maxCompletion ?? optionalNumber(body, 'max_tokens', 1, 1_000_000, true);
  const user = body['user'];
  if (user !== undefined && user !== null) {
    if (typeof user !== 'string') fail('invalid_type', `Invalid type for 'user': expected a string, but got ${describe(user)}.`, 'user');
    if (user.length > MAX_USER_CHARS) fail('invalid_value', `Invalid 'user': at most ${MAX_USER_CHARS} characters.`, 'user');
  }
  const request: CompletionRequest = { model: model.trim(), messages, stream: stream === true, includeUsage };
  if (temperature !== undefined) request.temperature = temperature;
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (typeof user === 'string' && user !== '') request.user = user;
  return request;
}
