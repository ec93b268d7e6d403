/**
 * Images to the model (openspec chat "Requirement: Image attachments", llm-settings "Requirement: Models that take
 * images"): which models take images (the provider's listing or the per-model setting) and the image parts a turn
 * sends, against the real app and the fake model.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { LlmModelsResponse, PublicLlmSettings } from '@cashcode/contracts';
import { FakeModelServer, type RecordedRequest } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { configureFakeModel, WsTestClient } from './support/ws-client';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('fake png body')]);

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

describe('image attachments', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let counter = 0;
  const newChatId = () => `img-chat-${++counter}`;

  beforeAll(async () => {
    fake = await FakeModelServer.start();
    t = await startTestApp();
    await configureFakeModel(t.httpUrl, fake.baseUrl);
  });

  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  beforeEach(() => {
    fake.reset();
    fake.models = ['fake-model'];
    fake.modelFields = {};
  });

  const putImageModel = (body: unknown) =>
    fetch(`${t.httpUrl}/api/settings/llm/image-models`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function uploadPng(chatId: string): Promise<string> {
    const form = new FormData();
    form.append('files', new Blob([PNG]), 'photo.txt');
    const response = await fetch(`${t.httpUrl}/api/sessions/${chatId}/attachments`, { method: 'POST', body: form });
    expect(response.status).toBe(201);
    const { attachments } = await json<{ attachments: Array<{ path: string; mime: string }> }>(response);
    expect(attachments[0]?.mime).toBe('image/png');
    return attachments[0]!.path;
  }

  async function sendWithAttachment(chatId: string, model: string, path: string): Promise<RecordedRequest> {
    const client = await WsTestClient.connect(t.wsUrl);
    try {
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.send({
        type: 'message',
        chat_id: chatId,
        content: 'Describe this',
        metadata: { llm: { provider: 'openai_compatible', model } },
        attachments: [path],
      });
      await done;
    } finally {
      await client.close();
    }
    const request = fake.completions.at(-1);
    if (!request) throw new Error('the model was not called');
    return request;
  }

  const lastUser = (request: RecordedRequest) =>
    (request.body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === 'user').at(-1);

  it('Scenario: A listing that marks vision makes the model take images', async () => {
    fake.models = ['llava', 'plain'];
    fake.modelFields = { llava: { capabilities: ['completion', 'vision'] } };
    const listing = await json<LlmModelsResponse>(await fetch(`${t.httpUrl}/api/settings/llm/models`));
    expect(listing.models).toEqual([
      { provider: 'openai_compatible', id: 'llava', accepts_images: true, images_reported: true },
      { provider: 'openai_compatible', id: 'plain' },
    ]);
    // the listing alone is enough for a turn to send the image
    const chatId = newChatId();
    const path = await uploadPng(chatId);
    const request = await sendWithAttachment(chatId, 'llava', path);
    expect(Array.isArray(lastUser(request)?.content)).toBe(true);
  });

  it('Scenario: The per-model image setting is saved and survives a settings PUT and a restart', async () => {
    const marked = await putImageModel({ provider: 'openai_compatible', model: ' my-vision ', accepts_images: true });
    expect(marked.status).toBe(200);
    expect(await json(marked)).toEqual({ image_models: [{ provider: 'openai_compatible', model: 'my-vision' }] });
    const file = JSON.parse(await fs.readFile(join(t.configDir, 'settings', 'llm.json'), 'utf8')) as Record<string, unknown>;
    expect(file['image_models']).toEqual([{ provider: 'openai_compatible', model: 'my-vision' }]);
    expect((await fs.stat(join(t.configDir, 'settings', 'llm.json'))).mode & 0o777).toBe(0o600);

    // a settings PUT (the connections) keeps the marks
    await configureFakeModel(t.httpUrl, fake.baseUrl);
    const settings = await json<PublicLlmSettings>(await fetch(`${t.httpUrl}/api/settings/llm`));
    expect(settings.image_models).toEqual([{ provider: 'openai_compatible', model: 'my-vision' }]);
    fake.models = ['my-vision'];
    const listing = await json<LlmModelsResponse>(await fetch(`${t.httpUrl}/api/settings/llm/models`));
    expect(listing.models).toEqual([{ provider: 'openai_compatible', id: 'my-vision', accepts_images: true }]);

    // loaded again after a restart
    const again = await startTestApp({ configDir: t.configDir });
    try {
      const reloaded = await json<PublicLlmSettings>(await fetch(`${again.httpUrl}/api/settings/llm`));
      expect(reloaded.image_models).toEqual([{ provider: 'openai_compatible', model: 'my-vision' }]);
    } finally {
      await again.close();
    }

    const cleared = await putImageModel({ provider: 'openai_compatible', model: 'my-vision', accepts_images: false });
    expect(await json(cleared)).toEqual({ image_models: [] });
    expect((await json<PublicLlmSettings>(await fetch(`${t.httpUrl}/api/settings/llm`))).image_models).toBeUndefined();
    const after = JSON.parse(await fs.readFile(join(t.configDir, 'settings', 'llm.json'), 'utf8')) as Record<string, unknown>;
    expect(after['image_models']).toBeUndefined();
  });

  it('Scenario: An invalid image-model request is refused field by field', async () => {
    const before = await fs.readFile(join(t.configDir, 'settings', 'llm.json'), 'utf8');
    const response = await putImageModel({ provider: 'gpt', model: '  ', accepts_images: 'yes' });
    expect(response.status).toBe(422);
    const problem = await json<{ errors: Array<{ field: string }> }>(response);
    expect(problem.errors.map((e) => e.field).sort()).toEqual(['accepts_images', 'model', 'provider']);
    expect(await fs.readFile(join(t.configDir, 'settings', 'llm.json'), 'utf8')).toBe(before);
  });

  it('Scenario: An image attachment goes to a model that takes images as an image part', async () => {
    await putImageModel({ provider: 'openai_compatible', model: 'vision-model', accepts_images: true });
    const chatId = newChatId();
    const path = await uploadPng(chatId);
    const request = await sendWithAttachment(chatId, 'vision-model', path);
    expect(lastUser(request)).toEqual({
      role: 'user',
      content: [
        {
          type: 'text',
          text: `Describe this\n\n[Attached files (paths relative to the workspace): ${path} (image/png, ${PNG.length} bytes)]`,
        },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      ],
    });
    const base64 = PNG.toString('base64');
    const history = await fs.readFile(join(t.config.memoryDir, chatId, 'history.jsonl'), 'utf8');
    expect(history).not.toContain(base64);
    expect(history).toContain(path);
    const projection = await (await fetch(`${t.httpUrl}/api/sessions/${chatId}/messages`)).text();
    expect(projection).not.toContain(base64);
    expect(projection).toContain(path);
  });

  it('Scenario: A model that does not take images gets the text reference only', async () => {
    const chatId = newChatId();
    const path = await uploadPng(chatId);
    const request = await sendWithAttachment(chatId, 'text-only-model', path);
    expect(lastUser(request)).toEqual({
      role: 'user',
      content: `Describe this\n\n[Attached files (paths relative to the workspace): ${path} (image/png, ${PNG.length} bytes)]`,
    });
  });
});
