/**
 * Chat attachments (openspec chat "Requirement: Attachments"): the upload REST endpoints against the real app, and a
 * message referring to its uploads through the real gateway and the fake model.
 */
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { AttachmentReceipt, ServerEvent } from '@cashcode/contracts';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

interface Part {
  field?: string;
  /** the raw file name put into the Content-Disposition header (not encoded, so `/`, `\\` and NUL arrive as sent) */
  filename: string;
  data: Buffer | string;
  /** send the name as RFC 5987 `filename*=UTF-8''…` (percent-encoded: how control characters can be sent at all) */
  encoded?: boolean;
}

/** A multipart/form-data body built by hand, so file names reach the server exactly as given. */
function multipart(parts: readonly Part[]): { body: Buffer; contentType: string } {
  const boundary = `----cashcode-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.field ?? 'files'}"; ` +
          (part.encoded ? `filename*=UTF-8''${encodeURIComponent(part.filename)}` : `filename="${part.filename}"`) +
          '\r\n' +
          'Content-Type: application/octet-stream\r\n\r\n',
        'utf8',
      ),
    );
    chunks.push(Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data, 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(24, 1)]);

describe('chat attachments', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let counter = 0;
  const newChatId = () => `att-chat-${++counter}`;
  const folderOf = (chatId: string) => join(t.config.workspaceDir, 'attachments', chatId);

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp({
      env: {
        CASHCODE_ATTACHMENT_MAX_BYTES: '1024',
        CASHCODE_ATTACHMENT_MAX_REQUEST_BYTES: '1536',
        CASHCODE_ATTACHMENT_MAX_FILES: '3',
      },
    });
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(() => fake.reset());

  async function upload(chatId: string, parts: readonly Part[]): Promise<{ status: number; body: Record<string, unknown>; type: string }> {
    const { body, contentType } = multipart(parts);
    const response = await fetch(`${t.httpUrl}/api/sessions/${encodeURIComponent(chatId)}/attachments`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, type: response.headers.get('content-type') ?? '' };
  }

  async function uploadOk(chatId: string, parts: readonly Part[]): Promise<AttachmentReceipt[]> {
    const res = await upload(chatId, parts);
    expect(res.status).toBe(201);
    return (res.body as { attachments: AttachmentReceipt[] }).attachments;
  }

  async function folderEntries(chatId: string): Promise<string[]> {
    try {
      return (await fs.readdir(folderOf(chatId))).sort();
    } catch {
      return [];
    }
  }

  it('Scenario: Uploaded files are stored privately in the chat\'s attachments folder', async () => {
    const chatId = newChatId();
    const stored = await uploadOk(chatId, [
      { filename: 'notes.txt', data: 'hello attachments\n' },
      { filename: 'picture.dat', data: PNG },
    ]);
    expect(stored).toEqual([
      { name: 'notes.txt', path: `attachments/${chatId}/notes.txt`, size: 18, mime: 'text/plain' },
      // the type comes from the magic bytes, not from the name
      { name: 'picture.dat', path: `attachments/${chatId}/picture.dat`, size: PNG.length, mime: 'image/png' },
    ]);
    expect(await fs.readFile(join(t.config.workspaceDir, stored[0]!.path), 'utf8')).toBe('hello attachments\n');
    expect((await fs.readFile(join(t.config.workspaceDir, stored[1]!.path))).equals(PNG)).toBe(true);
    for (const entry of stored) expect((await fs.stat(join(t.config.workspaceDir, entry.path))).mode & 0o777).toBe(0o600);
    expect((await fs.stat(folderOf(chatId))).mode & 0o777).toBe(0o700);
    // no temp file is left behind
    expect(await folderEntries(chatId)).toEqual(['notes.txt', 'picture.dat']);
  });

  it('Scenario: A name already taken gets a numbered suffix', async () => {
    const chatId = newChatId();
    await uploadOk(chatId, [{ filename: 'report.txt', data: 'first' }]);
    const second = await uploadOk(chatId, [
      { filename: 'report.txt', data: 'second' },
      { filename: 'report.txt', data: 'third' },
    ]);
    expect(second.map((a) => a.name)).toEqual(['report-1.txt', 'report-2.txt']);
    expect(await fs.readFile(join(folderOf(chatId), 'report.txt'), 'utf8')).toBe('first');
    expect(await fs.readFile(join(folderOf(chatId), 'report-2.txt'), 'utf8')).toBe('third');
  });

  it('Scenario: Path parts, control characters and leading dots are removed from names', async () => {
    const chatId = newChatId();
    const longName = `${'é'.repeat(150)}.txt`;
    const stored = await uploadOk(chatId, [
      { filename: '../x', data: '1' },
      { filename: 'a/b', data: '2' },
      { filename: '..\\y', data: '3' },
    ]);
    expect(stored.map((a) => a.name)).toEqual(['x', 'b', 'y']);
    const more = await uploadOk(chatId, [
      { filename: 'n\u0000ul\u0007.txt', data: '4', encoded: true },
      { filename: '.bashrc', data: '5' },
      { filename: longName, data: '6' },
    ]);
    expect(more[0]!.name).toBe('nul.txt');
    expect(more[1]!.name).toBe('bashrc');
    const cut = more[2]!.name;
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(120);
    expect(cut).toBe(`${'é'.repeat(58)}.txt`);
    // Unicode names are kept (NFC), direction overrides dropped
    const unicode = await uploadOk(chatId, [{ filename: 're\u0301sume\u0301 \u202eflow.txt', data: '7' }]);
    expect(unicode[0]!.name).toBe('résumé flow.txt');
    expect(await folderEntries(chatId)).toEqual(['b', 'bashrc', cut, 'nul.txt', 'résumé flow.txt', 'x', 'y'].sort());
    // nothing escaped the chat's folder
    expect(existsSync(join(t.config.workspaceDir, 'attachments', 'x'))).toBe(false);
    expect(existsSync(join(t.config.workspaceDir, 'x'))).toBe(false);
    expect(existsSync(join(t.config.workspaceDir, 'attachments', chatId, 'a'))).toBe(false);
  });

  it('Scenario: Bad uploads are problem+json with a stable code and store nothing', async () => {
    const chatId = newChatId();
    const expectProblem = async (parts: readonly Part[], status: number, code: string, detail?: RegExp, target = chatId) => {
      const res = await upload(target, parts);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res).toMatchObject({ status, body: { status, code } });
      if (detail) expect(res.body['detail']).toMatch(detail);
      return res.body;
    };
    const tooLarge = await expectProblem([{ filename: 'big.bin', data: Buffer.alloc(1025, 1) }], 413, 'attachment_too_large', /1 KiB/);
    expect(tooLarge['limit']).toBe(1024);
    const total = await expectProblem(
      [
        { filename: 'a.bin', data: Buffer.alloc(1000, 1) },
        { filename: 'b.bin', data: Buffer.alloc(1000, 1) },
      ],
      413,
      'attachments_too_large',
      /1536 bytes/,
    );
    expect(total['limit']).toBe(1536);
    await expectProblem([{ filename: 'ok.txt', data: 'ok' }, { filename: 'empty.txt', data: '' }], 422, 'attachment_empty', /empty\.txt/);
    const many = await expectProblem(
      [1, 2, 3, 4].map((n) => ({ filename: `f${n}.txt`, data: 'x' })),
      422,
      'attachment_too_many',
      /at most 3 files/,
    );
    expect(many['limit']).toBe(3);
    await expectProblem([{ filename: '...', data: 'x' }], 422, 'attachment_invalid_name');
    await expectProblem([{ filename: 'a/ . ', data: 'x' }], 422, 'attachment_invalid_name');
    await expectProblem([{ filename: '\u0001\u0002', data: 'x', encoded: true }], 422, 'attachment_invalid_name');
    // a raw control character in the part header is no valid multipart body
    await expectProblem([{ filename: 'a\u0001b', data: 'x' }], 400, 'multipart_invalid');
    // a name that is only `..` is no file name at all
    await expectProblem([{ filename: '..', data: 'x' }], 422, 'attachment_missing');
    await expectProblem([{ field: 'file', filename: 'x.txt', data: 'x' }], 422, 'attachment_field_invalid', /`files`/);
    await expectProblem([], 422, 'attachment_missing');
    await expectProblem([{ filename: 'x.txt', data: 'x' }], 400, 'invalid_chat_id', undefined, 'bad/../id');
    await expectProblem([{ filename: 'x.txt', data: 'x' }], 400, 'invalid_chat_id', undefined, 'a'.repeat(65));
    // a JSON body is no upload
    const json = await fetch(`${t.httpUrl}/api/sessions/${chatId}/attachments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(422);
    expect(((await json.json()) as { code: string }).code).toBe('attachment_missing');
    expect(await folderEntries(chatId)).toEqual([]);
  });

  it('Scenario: An uploaded file can be removed before sending', async () => {
    const chatId = newChatId();
    const [stored] = await uploadOk(chatId, [{ filename: 'drop me.txt', data: 'x' }]);
    const url = `${t.httpUrl}/api/sessions/${chatId}/attachments/${encodeURIComponent(stored!.name)}`;
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(204);
    expect(await folderEntries(chatId)).toEqual([]);
    const again = await fetch(url, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe('attachment_not_found');
    const traversal = await fetch(`${t.httpUrl}/api/sessions/${chatId}/attachments/${encodeURIComponent('../../SOUL.md')}`, {
      method: 'DELETE',
    });
    expect(traversal.status).toBe(404);
  });

  describe('in a message', () => {
    let client: WsTestClient;

    beforeEach(async () => {
      client = await WsTestClient.connect(t.wsUrl);
    });

    afterEach(async () => {
      await client.close();
    });

    async function send(chatId: string, content: string, attachments: unknown): Promise<ServerEvent[]> {
      const before = client.chatEvents(chatId).length;
      const end = Promise.race([
        client.next('done', (e) => e.chat_id === chatId),
        client.next('error', (e) => e.chat_id === chatId),
      ]);
      client.send({ type: 'message', chat_id: chatId, content, metadata: { llm: { provider: 'openai_compatible', model: 'fake-model' } }, attachments });
      await end;
      return client.chatEvents(chatId).slice(before);
    }

    const userMessages = (request: RecordedRequest | undefined) =>
      ((request?.body as { messages: Array<{ role: string; content: unknown }> }).messages ?? []).filter((m) => m.role === 'user');

    it('Scenario: A message with attachments names their paths to the model and keeps them in history', async () => {
      const chatId = newChatId();
      const stored = await uploadOk(chatId, [{ filename: 'data.csv', data: 'a,b\n1,2\n' }]);
      const path = stored[0]!.path;
      fake.enqueue(
        { toolCalls: [{ id: 'call_read', name: 'read_file', arguments: JSON.stringify({ path }) }] },
        { content: 'The file has two rows.' },
      );
      const events = await send(chatId, 'What is in the file?', [path]);
      expect(events.at(-1)?.event).toBe('done');
      const first = userMessages(fake.completions[0]).at(-1);
      expect(first?.content).toBe(
        `What is in the file?\n\n[Attached files (paths relative to the workspace): ${path} (text/plain, 8 bytes)]`,
      );
      // the tool opened the file by that path
      const toolMessage = (fake.completions[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.find(
        (m) => m.role === 'tool',
      );
      expect(toolMessage?.content).toContain('1,2');

      const messages = (await (await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`)).json()) as {
        messages: Array<{ role: string; content: string; attachments?: AttachmentReceipt[] }>;
      };
      expect(messages.messages[0]).toEqual({ role: 'user', content: 'What is in the file?', attachments: stored, cursor: 1 });
      const history = (await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(history[0]).toMatchObject({ role: 'user', content: 'What is in the file?', attachments: stored });

      // a later turn still tells the model about the earlier message's file
      fake.enqueue({ content: 'ok' });
      await send(chatId, 'thanks', undefined);
      const later = userMessages(fake.completions[2]);
      expect(later[0]?.content).toContain(`[Attached files (paths relative to the workspace): ${path}`);
      expect(later.at(-1)?.content).toBe('thanks');
    });

    it('Scenario: A message referring to a file that is not an uploaded file of the chat fails', async () => {
      const chatId = newChatId();
      const other = newChatId();
      const [foreign] = await uploadOk(other, [{ filename: 'secret.txt', data: 'x' }]);
      await fs.writeFile(join(t.config.workspaceDir, 'outside.txt'), 'x');
      for (const path of [
        foreign!.path,
        `attachments/${chatId}/missing.txt`,
        `attachments/${chatId}/../${other}/secret.txt`,
        'outside.txt',
        `attachments/${chatId}/.upload-1`,
      ]) {
        const events = await send(chatId, 'look', [path]);
        expect(events).toEqual([expect.objectContaining({ event: 'error', chat_id: chatId, code: 'attachment_not_found' })]);
      }
      expect(fake.completions).toHaveLength(0);
      expect(existsSync(join(t.config.memoryDir, chatId, 'history.jsonl'))).toBe(false);

      const invalid = await send(chatId, 'look', 'not-a-list');
      expect(invalid).toEqual([expect.objectContaining({ event: 'error', chat_id: chatId, code: 'invalid_attachments' })]);
    });
  });
});
