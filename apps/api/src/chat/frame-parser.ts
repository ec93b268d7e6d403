/**
 * Client → server frame parsing and validation (the chat protocol's client frames and message metadata). Pure: no
 * transport, no I/O.
 *
 * - Text is trimmed, must start with `{`, parse as a JSON object with a string `type` → else
 *   `typed JSON envelope required` (no chat_id).
 * - JSON nested more than MAX_JSON_DEPTH (64) levels is refused before it is parsed → `frame is nested too deeply …`
 *   (code `too_deep`, no chat_id); the connection stays open.
 * - Binary frames are UTF-8 decoded; undecodable ones are ignored silently.
 * - Chat ids match ^[A-Za-z0-9_:-]{1,64}$ → else `invalid chat_id` (no chat_id).
 * - message: blank/non-string content → `missing content` (with chat_id); invalid selection metadata → the
 *   sanitizer's message (with chat_id); additive `attachments` present but not a list of at most MAX_MESSAGE_ATTACHMENTS
 *   non-empty strings of at most MAX_ATTACHMENT_PATH_CHARS characters → `invalid_attachments` (with chat_id). Whether
 *   each path is an uploaded file of the chat is checked when the turn starts.
 * - approval: `call_id` a non-empty string of at most 256 printable characters and `decision` one of `allow_once`,
 *   `allow_always`, `deny` → else `invalid_frame` (with chat_id). Whether the call is pending is the gateway's concern.
 * - chat_action: `action` one of `regenerate`, `edit`, `continue` and valid selection metadata; `edit` also needs a
 *   non-negative integer `cursor` and non-blank string `content` → else `invalid_frame` / `missing_content` /
 *   the sanitizer's message (with chat_id). Whether the target exists is ChatService's concern.
 * - Unknown type T → `unknown type: 'T'` (Python repr of the value). Extra keys are ignored.
 */
import { MAX_JSON_DEPTH, parseJsonLimited } from '../common/json-limits';
import {
  APPROVAL_DECISIONS,
  CHAT_ACTIONS,
  type ChatActionName,
  CHAT_ID_PATTERN,
  ELICITATION_ACTIONS,
  MAX_ATTACHMENT_PATH_CHARS,
  MAX_MESSAGE_ATTACHMENTS,
  type ApprovalDecision,
  type ElicitationAction,
  sanitizeMessageMetadata,
  type ErrorEvent,
  type MessageMetadata,
} from '@cashcode/contracts';

/** Machine-readable reasons, also the `code` of the error event and the `reason` of `ws.frame.rejected` logs. */
export type FrameRejectReason =
  | 'invalid_envelope'
  | 'too_deep'
  | 'invalid_chat_id'
  | 'missing_content'
  | 'invalid_selection_metadata'
  | 'invalid_frame'
  | 'invalid_attachments'
  | 'unknown_type';

/** the longest `call_id` an approval frame may carry */
export const MAX_CALL_ID_CHARS = 256;
const CALL_ID_PATTERN = /^[\x21-\x7e]+$/;

export type ParsedFrame =
  | { kind: 'ping' }
  | { kind: 'new_chat' }
  | { kind: 'attach'; chatId: string }
  | { kind: 'cancel'; chatId: string }
  | { kind: 'message'; chatId: string; content: string; metadata: MessageMetadata; attachments: string[] }
  | { kind: 'approval'; chatId: string; callId: string; decision: ApprovalDecision }
  | { kind: 'elicitation'; chatId: string; elicitationId: string; action: ElicitationAction; content: unknown }
  | {
      kind: 'chat_action';
      chatId: string;
      action: ChatActionName;
      /** edit only */
      cursor?: number;
      /** edit only, untrimmed */
      content?: string;
      metadata: MessageMetadata;
    }
  /** an undecodable binary frame: dropped without a reply */
  | { kind: 'ignore'; reason: 'invalid_utf8' }
  | { kind: 'reject'; reason: FrameRejectReason; error: ErrorEvent };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function reject(reason: FrameRejectReason, detail: string, chatId?: string): ParsedFrame {
  const error: ErrorEvent = { event: 'error', detail, code: reason };
  if (chatId !== undefined) error.chat_id = chatId;
  return { kind: 'reject', reason, error };
}

function isValidChatId(value: unknown): value is string {
  return typeof value === 'string' && CHAT_ID_PATTERN.test(value);
}

/**
 * Python's repr() of a str. The original Python server quoted an unknown frame type with it (`unknown type: 'x'`), and
 * clients match that message, so it is reproduced byte-for-byte (see ARCHITECTURE.md, "The original Python server").
 */
export function pythonStringRepr(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    if (char === '\\') out += '\\\\';
    else if (char === quote) out += '\\' + quote;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
    else if (code >= 0x80 && code <= 0xa0) out += '\\x' + code.toString(16).padStart(2, '0');
    else if (code >= 0xd800 && code <= 0xdfff) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += char;
  }
  return out + quote;
}

/** The additive `attachments` of a message frame: absent/null → []; null when it is not a valid list of paths. */
function parseAttachmentPaths(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_MESSAGE_ATTACHMENTS) return null;
  const valid = value.every(
    (item): item is string => typeof item === 'string' && item !== '' && item.length <= MAX_ATTACHMENT_PATH_CHARS,
  );
  return valid ? (value as string[]) : null;
}

/** Decodes a raw ws payload; null when a binary frame is not valid UTF-8. */
export function decodeFrame(data: Buffer | ArrayBuffer | Buffer[] | string, isBinary: boolean): string | null {
  if (typeof data === 'string') return data;
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  if (!isBinary) return buffer.toString('utf8');
  try {
    return utf8.decode(buffer);
  } catch {
    return null;
  }
}

/** Parses one decoded frame text. */
export function parseFrameText(raw: string): ParsedFrame {
  const text = raw.trim();
  if (!text.startsWith('{')) return reject('invalid_envelope', 'typed JSON envelope required');
  const result = parseJsonLimited(text);
  if (!result.ok) {
    return result.reason === 'too_deep'
      ? reject('too_deep', `frame is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`)
      : reject('invalid_envelope', 'typed JSON envelope required');
  }
  const parsed = result.value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return reject('invalid_envelope', 'typed JSON envelope required');
  }
  const frame = parsed as Record<string, unknown>;
  const type = frame['type'];
  if (typeof type !== 'string') return reject('invalid_envelope', 'typed JSON envelope required');

  switch (type) {
    case 'ping':
      return { kind: 'ping' };
    case 'new_chat':
      return { kind: 'new_chat' };
    case 'attach': {
      const chatId = frame['chat_id'];
      return isValidChatId(chatId) ? { kind: 'attach', chatId } : reject('invalid_chat_id', 'invalid chat_id');
    }
    case 'cancel':
    case 'stop': {
      const chatId = frame['chat_id'];
      return isValidChatId(chatId) ? { kind: 'cancel', chatId } : reject('invalid_chat_id', 'invalid chat_id');
    }
    case 'message': {
      const chatId = frame['chat_id'];
      if (!isValidChatId(chatId)) return reject('invalid_chat_id', 'invalid chat_id');
      const content = frame['content'];
      if (typeof content !== 'string' || content.trim() === '') {
        return reject('missing_content', 'missing content', chatId);
      }
      const metadata = sanitizeMessageMetadata(frame['metadata']);
      if (!metadata.ok) return reject('invalid_selection_metadata', metadata.error, chatId);
      const attachments = parseAttachmentPaths(frame['attachments']);
      if (attachments === null) {
        return reject(
          'invalid_attachments',
          `attachments must be a list of at most ${MAX_MESSAGE_ATTACHMENTS} attachment paths of at most ${MAX_ATTACHMENT_PATH_CHARS} characters`,
          chatId,
        );
      }
      // content is forwarded untrimmed, like the original server
      return { kind: 'message', chatId, content, metadata: metadata.metadata, attachments };
    }
    case 'approval': {
      const chatId = frame['chat_id'];
      if (!isValidChatId(chatId)) return reject('invalid_chat_id', 'invalid chat_id');
      const callId = frame['call_id'];
      if (typeof callId !== 'string' || callId.length > MAX_CALL_ID_CHARS || !CALL_ID_PATTERN.test(callId)) {
        return reject('invalid_frame', `call_id must be a non-empty string of at most ${MAX_CALL_ID_CHARS} printable characters`, chatId);
      }
      const decision = frame['decision'];
      if (typeof decision !== 'string' || !(APPROVAL_DECISIONS as readonly string[]).includes(decision)) {
        return reject('invalid_frame', `decision must be one of ${APPROVAL_DECISIONS.join(', ')}`, chatId);
      }
      return { kind: 'approval', chatId, callId, decision: decision as ApprovalDecision };
    }
    case 'elicitation': {
      const chatId = frame['chat_id'];
      if (!isValidChatId(chatId)) return reject('invalid_chat_id', 'invalid chat_id');
      const id = frame['elicitation_id'];
      if (typeof id !== 'string' || id.length > MAX_CALL_ID_CHARS || !CALL_ID_PATTERN.test(id)) {
        return reject('invalid_frame', `elicitation_id must be a non-empty string of at most ${MAX_CALL_ID_CHARS} printable characters`, chatId);
      }
      const action = frame['action'];
      if (typeof action !== 'string' || !(ELICITATION_ACTIONS as readonly string[]).includes(action)) {
        return reject('invalid_frame', `action must be one of ${ELICITATION_ACTIONS.join(', ')}`, chatId);
      }
      return { kind: 'elicitation', chatId, elicitationId: id, action: action as ElicitationAction, content: frame['content'] };
    }
    case 'chat_action':
      return parseChatAction(frame);
    default:
      return reject('unknown_type', `unknown type: ${pythonStringRepr(type)}`);
  }
}

function parseChatAction(frame: Record<string, unknown>): ParsedFrame {
  const chatId = frame['chat_id'];
  if (!isValidChatId(chatId)) return reject('invalid_chat_id', 'invalid chat_id');
  const action = frame['action'];
  if (typeof action !== 'string' || !(CHAT_ACTIONS as readonly string[]).includes(action)) {
    return reject('invalid_frame', `action must be one of ${CHAT_ACTIONS.join(', ')}`, chatId);
  }
  const metadata = sanitizeMessageMetadata(frame['metadata']);
  if (!metadata.ok) return reject('invalid_selection_metadata', metadata.error, chatId);
  if (action !== 'edit') return { kind: 'chat_action', chatId, action: action as ChatActionName, metadata: metadata.metadata };
  const cursor = frame['cursor'];
  if (typeof cursor !== 'number' || !Number.isSafeInteger(cursor) || cursor < 0) {
    return reject('invalid_frame', 'cursor must be the non-negative integer cursor of a user message', chatId);
  }
  const content = frame['content'];
  if (typeof content !== 'string' || content.trim() === '') return reject('missing_content', 'missing content', chatId);
  return { kind: 'chat_action', chatId, action: 'edit', cursor, content, metadata: metadata.metadata };
}

/** Decodes and parses a raw ws payload. */
export function parseFrame(data: Buffer | ArrayBuffer | Buffer[] | string, isBinary: boolean): ParsedFrame {
  const text = decodeFrame(data, isBinary);
  if (text === null) return { kind: 'ignore', reason: 'invalid_utf8' };
  return parseFrameText(text);
}
