// A small scriptable stand-in for the Telegram Bot API for the browser e2e (plain JS; the API e2e has the fuller
// apps/api/test/support/fake-telegram-server.ts). The server reaches it through CASHCODE_TELEGRAM_API_ROOT:
//   POST /bot<token>/getMe              → the test bot (any other token: 401 Unauthorized)
//   POST /bot<token>/getUpdates         → the queued updates from `offset` on, held as a long poll until one arrives
//   POST /bot<token>/sendMessage        → stored (chat, text, buttons), answered with a message id
//   POST /bot<token>/editMessageText    → the stored message's text replaced (the streaming edits of an answer)
//   sendChatAction, answerCallbackQuery, deleteMessage → true
// A test plays the people writing to the bot: queueMessage({ from, text }) and reads what the bot said with
// messagesIn(chatId) / waitForMessage(chatId, predicate).
import { createServer } from 'node:http';

export const TEST_BOT_TOKEN = '123456789:TEST-token-abcdefghijklmnopqrstuvwxyz012';

export class FakeTelegramServer {
  me = { id: 777000111, is_bot: true, first_name: 'CashCode', username: 'cashcode_test_bot', can_join_groups: true };
  /** every Bot API call: { method, params, status } */
  calls = [];
  /** what the bot sent: { message_id, chat_id, text } (text is the latest edit) */
  messages = [];
  validToken;
  #server;
  #sockets = new Set();
  #updates = [];
  #nextUpdateId = 1000;
  #nextMessageId = 1;
  #waiters = [];

  static async start(token = TEST_BOT_TOKEN) {
    const instance = new FakeTelegramServer();
    instance.validToken = token;
    instance.#server = createServer((req, res) => void instance.#handle(req, res));
    instance.#server.on('connection', (socket) => {
      instance.#sockets.add(socket);
      socket.on('close', () => instance.#sockets.delete(socket));
    });
    await new Promise((resolve) => instance.#server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.#server.address().port}`;
  }

  async close() {
    for (const wake of this.#waiters.splice(0)) wake();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** A private-chat text message from `from` ({ id, first_name, last_name?, username? }). */
  queueMessage({ from, text }) {
    const update_id = this.#nextUpdateId++;
    this.#updates.push({
      update_id,
      message: {
        message_id: update_id,
        date: Math.floor(Date.now() / 1000),
        from: { is_bot: false, ...from },
        chat: { id: from.id, type: 'private', first_name: from.first_name, ...(from.username ? { username: from.username } : {}) },
        text,
      },
    });
    for (const wake of this.#waiters.splice(0)) wake();
    return update_id;
  }

  messagesIn(chatId) {
    return this.messages.filter((message) => message.chat_id === String(chatId));
  }

  /** Waits until the bot sent (or edited) a message in the chat that matches (`after`: skip the first that many). */
  async waitForMessage(chatId, predicate, { after = 0, timeoutMs = 15_000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messagesIn(chatId).slice(after).find((message) => predicate(message.text));
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`no bot message in ${chatId} matched; it sent: ${JSON.stringify(this.messagesIn(chatId).map((m) => m.text))}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async #handle(req, res) {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const [, token, method] = match;
    const body = Buffer.concat(chunks).toString('utf8');
    let params = Object.fromEntries(url.searchParams);
    if ((req.headers['content-type'] ?? '').includes('application/json') && body !== '') params = { ...params, ...JSON.parse(body) };
    const reply = (status, payload) => {
      this.calls.push({ method, params, status });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const ok = (result) => reply(200, { ok: true, result });
    if (token !== this.validToken) return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    switch (method) {
      case 'getMe':
        return ok(this.me);
      case 'getUpdates':
        return ok(await this.#getUpdates(params, req));
      case 'sendMessage': {
        const message = { message_id: this.#nextMessageId++, chat_id: String(params.chat_id), text: String(params.text ?? '') };
        this.messages.push(message);
        return ok({ message_id: message.message_id, date: 0, chat: { id: Number(params.chat_id), type: 'private' }, text: message.text });
      }
      case 'editMessageText': {
        const target = this.messages.find((m) => m.chat_id === String(params.chat_id) && m.message_id === Number(params.message_id));
        if (!target) return reply(400, { ok: false, error_code: 400, description: 'Bad Request: message to edit not found' });
        target.text = String(params.text ?? '');
        return ok({ message_id: target.message_id, date: 0, chat: { id: Number(params.chat_id), type: 'private' }, text: target.text });
      }
      case 'sendChatAction':
      case 'answerCallbackQuery':
      case 'deleteMessage':
        return ok(true);
      default:
        return reply(404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    }
  }

  async #getUpdates(params, req) {
    const offset = typeof params.offset === 'number' ? params.offset : Number(params.offset ?? 0);
    // confirmed updates are forgotten, as Telegram does
    this.#updates = this.#updates.filter((update) => update.update_id >= offset);
    const deadline = Date.now() + Math.min(Number(params.timeout ?? 0), 30) * 1000;
    let closed = false;
    req.socket.once('close', () => (closed = true));
    while (this.#updates.length === 0 && Date.now() < deadline && !closed) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.#updates.slice(0, Number(params.limit ?? 100));
  }
}
