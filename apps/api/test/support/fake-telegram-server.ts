/**
 * A local stand-in for the Telegram Bot API, for the channel tests: a real HTTP server that grammY talks to through
 * CASHCODE_TELEGRAM_API_ROOT. It speaks getMe, getUpdates (long poll with timeout, offset and allowed_updates),
 * sendMessage, editMessageText, deleteMessage, answerCallbackQuery, sendChatAction, getFile (+ the file download
 * endpoint), sendDocument and setWebhook/deleteWebhook, checks what Telegram checks (the token, the 4,096-character limit, HTML that Telegram
 * can parse, edits that change nothing), records every call, and is scriptable: queue updates, make the next calls
 * fail with a 429 (`retry_after`), a 401 or a 5xx, or take the whole API down (connections reset) and up again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  /** Date.now() when it arrived */
  at: number;
  /** HTTP status answered */
  status: number;
}

export interface StoredMessage {
  message_id: number;
  chat_id: string;
  text: string;
  parse_mode?: string;
  reply_markup?: { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> };
  deleted?: boolean;
  /** every text the message had, in order */
  versions: string[];
}

export interface TgUser {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
}

interface Fault {
  method: string | '*';
  status: number;
  description: string;
  retryAfter?: number;
  remaining: number;
}

const ALLOWED_TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'code', 'pre', 'a', 'blockquote', 'tg-spoiler', 'span']);

/** Checks HTML as Telegram does (allowed tags, balanced, known entities); returns the error or null, and the visible text. */
export function parseTelegramHtml(html: string): { error: string | null; text: string } {
  const stack: string[] = [];
  let text = '';
  let i = 0;
  while (i < html.length) {
    const char = html[i] as string;
    if (char === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) return { error: `can't parse entities: unclosed start tag at byte offset ${i}`, text };
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith('/');
      const name = (closing ? inner.slice(1) : inner).split(/[\s=]/)[0]?.toLowerCase() ?? '';
      if (!ALLOWED_TAGS.has(name)) return { error: `can't parse entities: unsupported start tag "${name}" at byte offset ${i}`, text };
      if (closing) {
        if (stack.pop() !== name) return { error: `can't parse entities: unmatched end tag at byte offset ${i}`, text };
      } else stack.push(name);
      i = end + 1;
    } else if (char === '&') {
      const match = /^&(amp|lt|gt|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/.exec(html.slice(i, i + 12));
      if (!match) return { error: `can't parse entities: unsupported entity at byte offset ${i}`, text };
      text += match[1] === 'amp' ? '&' : match[1] === 'lt' ? '<' : match[1] === 'gt' ? '>' : '"';
      i += match[0].length;
    } else if (char === '>') {
      return { error: `can't parse entities: unexpected > at byte offset ${i}`, text };
    } else {
      text += char;
      i++;
    }
  }
  if (stack.length > 0) return { error: `can't parse entities: can't find end tag corresponding to start tag "${stack[stack.length - 1]}"`, text };
  return { error: null, text };
}

export class FakeTelegramServer {
  readonly calls: RecordedCall[] = [];
  readonly messages: StoredMessage[] = [];
  readonly me = { id: 777000111, is_bot: true, first_name: 'CashCode', username: 'cashcode_test_bot', can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
  /** the token the server accepts; any other gets 401 */
  validToken: string;
  /** Telegram forgets updates confirmed by a later offset; false = replay them (a server that lost the confirmation) */
  forgetConfirmed = true;
  /** a webhook URL set with setWebhook (getUpdates then answers 409, as Telegram does) */
  webhook = '';
  private updates: Array<Record<string, unknown> & { update_id: number }> = [];
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private faults: Fault[] = [];
  private down = false;
  private waiters: Array<() => void> = [];
  private callWaiters: Array<() => void> = [];
  private readonly files = new Map<string, { path: string; data: Buffer }>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    token: string,
  ) {
    this.validToken = token;
  }

  static async start(token = '123456789:TEST-token-abcdefghijklmnopqrstuvwxyz012'): Promise<FakeTelegramServer> {
    let instance: FakeTelegramServer | null = null;
    const server = createServer((req, res) => void instance?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    instance = new FakeTelegramServer(server, `http://127.0.0.1:${port}`, token);
    server.on('connection', (socket) => {
      instance?.sockets.add(socket);
      socket.on('close', () => instance?.sockets.delete(socket));
    });
    return instance;
  }

  async close(): Promise<void> {
    for (const wake of this.waiters.splice(0)) wake();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- scripting ----------------------------------------------------------------------------

  /** Queues an update (update_id assigned); wakes a waiting long poll. */
  queue(update: Record<string, unknown>): number {
    const update_id = this.nextUpdateId++;
    this.updates.push({ update_id, ...update });
    for (const wake of this.waiters.splice(0)) wake();
    return update_id;
  }

  /** Queues a text message (or a photo/document with caption) from `from` in a chat. */
  queueMessage(options: {
    from: TgUser;
    text?: string;
    chat?: { id: number; type: 'private' | 'group' | 'supergroup'; title?: string };
    photo?: { fileId: string; size: number };
    document?: { fileId: string; name: string; size: number };
    replyToBot?: boolean;
    edited?: boolean;
    /** extra message fields, e.g. `{ voice: {...} }` */
    extra?: Record<string, unknown>;
  }): number {
    const chat = options.chat ?? { id: options.from.id, type: 'private' as const, first_name: options.from.first_name };
    const text = options.text ?? '';
    const entities: Array<{ type: string; offset: number; length: number }> = [];
    const mention = `@${this.me.username}`;
    const at = text.indexOf(mention);
    if (at >= 0) entities.push({ type: 'mention', offset: at, length: mention.length });
    if (text.startsWith('/')) entities.push({ type: 'bot_command', offset: 0, length: text.split(/\s/)[0]!.length });
    const message: Record<string, unknown> = {
      message_id: this.nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat,
      from: { is_bot: false, ...options.from },
    };
    const hasFile = options.photo || options.document;
    if (hasFile) {
      if (text) {
        message['caption'] = text;
        message['caption_entities'] = entities;
      }
    } else {
      message['text'] = text;
      message['entities'] = entities;
    }
    if (options.photo) message['photo'] = [{ file_id: `${options.photo.fileId}-small`, file_unique_id: 's', width: 90, height: 90, file_size: 100 }, { file_id: options.photo.fileId, file_unique_id: 'b', width: 800, height: 600, file_size: options.photo.size }];
    if (options.document) message['document'] = { file_id: options.document.fileId, file_unique_id: 'd', file_name: options.document.name, file_size: options.document.size };
    if (options.replyToBot) message['reply_to_message'] = { message_id: 1, date: 0, chat, from: { id: this.me.id, is_bot: true, first_name: this.me.first_name } };
    if (options.extra) {
      Object.assign(message, options.extra);
      if (!text) delete message['text'];
    }
    return this.queue(options.edited ? { edited_message: message } : { message });
  }

  /** Queues a button press on a message of the bot. */
  queueCallback(options: { from: TgUser; messageId: number; chatId: number; data: string; chatType?: 'private' | 'group' }): number {
    const chat = { id: options.chatId, type: options.chatType ?? 'private' };
    return this.queue({
      callback_query: {
        id: `cbq-${this.nextUpdateId}`,
        from: { is_bot: false, ...options.from },
        chat_instance: 'ci',
        data: options.data,
        message: { message_id: options.messageId, date: 0, chat, from: { id: this.me.id, is_bot: true, first_name: this.me.first_name }, text: '…' },
      },
    });
  }

  /** A file the bot can fetch with getFile + download; returns its file_id. */
  addFile(fileId: string, data: Buffer, path = `photos/${fileId}.jpg`): string {
    this.files.set(fileId, { path, data });
    return fileId;
  }

  /** The next `count` calls of `method` ('*' any) fail with this status. */
  fail(method: string | '*', status: number, options: { retryAfter?: number; description?: string; count?: number } = {}): void {
    this.faults.push({
      method,
      status,
      description: options.description ?? (status === 401 ? 'Unauthorized' : status === 429 ? `Too Many Requests: retry after ${options.retryAfter ?? 1}` : 'Internal Server Error'),
      ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
      remaining: options.count ?? 1,
    });
  }

  /** Outage: every connection is reset until `up()`. */
  takeDown(): void {
    this.down = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  up(): void {
    this.down = false;
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Resolves with the first recorded call (from now or earlier, index ≥ `from`) matching, or rejects after `timeoutMs`. */
  async waitForCall(predicate: (call: RecordedCall) => boolean, timeoutMs = 10_000, from = 0): Promise<RecordedCall> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.calls.slice(from).find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching Bot API call within ${timeoutMs} ms; calls: ${this.calls.map((c) => c.method).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.callWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The bot's live messages in a chat, oldest first. */
  messagesIn(chatId: number | string): StoredMessage[] {
    return this.messages.filter((message) => message.chat_id === String(chatId) && !message.deleted);
  }

  /** The visible text of a stored message (HTML parsed like Telegram does). */
  static visible(message: StoredMessage): string {
    return message.parse_mode === 'HTML' ? parseTelegramHtml(message.text).text : message.text;
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', this.baseUrl);
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      const stored = [...this.files.values()].find((entry) => entry.path === decodeURIComponent(file[2] as string));
      if (file[1] !== this.validToken || !stored) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': stored.data.length }).end(stored.data);
      return;
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    const body = await readBody(req);
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const [, token, method] = match as unknown as [string, string, string];
    const params = parseParams(req.headers['content-type'] ?? '', body, url);
    const reply = (status: number, payload: Record<string, unknown>): void => {
      this.calls.push({ method, params, at: Date.now(), status });
      for (const wake of this.callWaiters.splice(0)) wake();
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const error = (status: number, description: string, extra: Record<string, unknown> = {}): void =>
      reply(status, { ok: false, error_code: status, description, ...extra });
    if (token !== this.validToken) return error(401, 'Unauthorized');
    const fault = this.faults.find((candidate) => candidate.remaining > 0 && (candidate.method === '*' || candidate.method === method));
    if (fault) {
      fault.remaining--;
      return error(fault.status, fault.description, fault.retryAfter !== undefined ? { parameters: { retry_after: fault.retryAfter } } : {});
    }
    const ok = (result: unknown): void => reply(200, { ok: true, result });
    switch (method) {
      case 'getMe':
        return ok(this.me);
      case 'getUpdates':
        if (this.webhook !== '') return error(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
        return ok(await this.getUpdates(params, res));
      case 'sendMessage':
      case 'editMessageText': {
        const text = String(params['text'] ?? '');
        const mode = params['parse_mode'] as string | undefined;
        const parsed = mode === 'HTML' ? parseTelegramHtml(text) : { error: null, text };
        if (parsed.error) return error(400, `Bad Request: ${parsed.error}`);
        if (parsed.text.trim() === '') return error(400, 'Bad Request: message text is empty');
        if ([...parsed.text].length > 4096) return error(400, 'Bad Request: message is too long');
        const markup = params['reply_markup'] as StoredMessage['reply_markup'] | undefined;
        if (method === 'sendMessage') {
          const message: StoredMessage = { message_id: this.nextMessageId++, chat_id: String(params['chat_id']), text, versions: [text], ...(mode ? { parse_mode: mode } : {}), ...(markup ? { reply_markup: markup } : {}) };
          this.messages.push(message);
          return ok({ message_id: message.message_id, date: 0, chat: { id: Number(params['chat_id']), type: 'private' }, text: parsed.text });
        }
        const target = this.messages.find((m) => m.chat_id === String(params['chat_id']) && m.message_id === Number(params['message_id']) && !m.deleted);
        if (!target) return error(400, 'Bad Request: message to edit not found');
        if (target.text === text && (target.parse_mode ?? '') === (mode ?? '') && JSON.stringify(target.reply_markup ?? null) === JSON.stringify(markup ?? null)) {
          return error(400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
        }
        target.text = text;
        target.versions.push(text);
        if (mode) target.parse_mode = mode;
        else delete target.parse_mode;
        if (markup) target.reply_markup = markup;
        else delete target.reply_markup;
        return ok({ message_id: target.message_id, date: 0, chat: { id: Number(params['chat_id']), type: 'private' }, text: parsed.text });
      }
      case 'deleteMessage': {
        const target = this.messages.find((m) => m.chat_id === String(params['chat_id']) && m.message_id === Number(params['message_id']));
        if (!target) return error(400, 'Bad Request: message to delete not found');
        target.deleted = true;
        return ok(true);
      }
      case 'answerCallbackQuery':
      case 'sendChatAction':
        return ok(true);
      case 'setWebhook':
        this.webhook = String(params['url'] ?? '');
        return ok(true);
      case 'deleteWebhook':
        this.webhook = '';
        return ok(true);
      case 'getFile': {
        const entry = this.files.get(String(params['file_id']));
        if (!entry) return error(400, 'Bad Request: invalid file_id');
        return ok({ file_id: params['file_id'], file_unique_id: 'u', file_size: entry.data.length, file_path: entry.path });
      }
      case 'sendDocument': {
        const message: StoredMessage = { message_id: this.nextMessageId++, chat_id: String(params['chat_id']), text: `[document]`, versions: ['[document]'] };
        this.messages.push(message);
        return ok({ message_id: message.message_id, date: 0, chat: { id: Number(params['chat_id']), type: 'private' } });
      }
      default:
        return error(404, 'Not Found: method not found');
    }
  }

  private async getUpdates(params: Record<string, unknown>, res: ServerResponse): Promise<unknown[]> {
    const offset = typeof params['offset'] === 'number' ? params['offset'] : null;
    if (offset !== null && this.forgetConfirmed) this.updates = this.updates.filter((update) => update.update_id >= offset);
    const allowed = Array.isArray(params['allowed_updates']) ? (params['allowed_updates'] as string[]) : null;
    const available = (): unknown[] =>
      this.updates.filter(
        (update) =>
          (offset === null || update.update_id >= offset) &&
          (allowed === null || allowed.length === 0 || Object.keys(update).some((key) => key !== 'update_id' && allowed.includes(key))),
      );
    const timeoutSec = Math.min(Number(params['timeout'] ?? 0), 30);
    const deadline = Date.now() + timeoutSec * 1000;
    let closed = false;
    res.once('close', () => {
      closed = true;
    });
    while (available().length === 0 && Date.now() < deadline && !closed && !this.down) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return available().slice(0, Number(params['limit'] ?? 100));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JSON bodies, urlencoded query strings and multipart forms (text fields only; files are recorded by size). */
function parseParams(contentType: string, body: Buffer, url: URL): Record<string, unknown> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (contentType.includes('application/json') && body.length > 0) return { ...params, ...(JSON.parse(body.toString('utf8')) as Record<string, unknown>) };
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (boundary) {
    const marker = `--${boundary[1] ?? boundary[2]}`;
    for (const part of body.toString('latin1').split(marker)) {
      const name = /name="([^"]+)"/.exec(part)?.[1];
      if (!name) continue;
      const value = part.slice(part.indexOf('\r\n\r\n') + 4).replace(/\r\n$/, '');
      const isFile = /filename="/.test(part);
      params[name] = isFile ? { file_bytes: Buffer.byteLength(value, 'latin1') } : tryJson(Buffer.from(value, 'latin1').toString('utf8'));
    }
  }
  return params;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
