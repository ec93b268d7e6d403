/**
 * Streams as real providers send them (openspec agent-runner "Requirement: Provider stream quirks", llm-settings
 * "Requirement: Anthropic provider"), byte for byte where the shape is in the framing: the real application, the real
 * `openai` and `@anthropic-ai/sdk` clients, and the fake servers replaying what OpenRouter, DeepSeek, llama.cpp, vLLM,
 * Ollama and Anthropic put on the wire — SSE comments and empty keep-alive events, CRLF line ends, `content: null`,
 * llama.cpp's `timings` and its `error:` field, vLLM's error object, an unframed error body, Ollama's whole tool calls
 * ending in `stop`, Anthropic's pings, redacted thinking, citation deltas, `pause_turn`, `refusal` and an overloaded
 * error after text.
 */
import request from 'supertest';
import type { ServerEvent } from '@cashcode/contracts';
import type { AgentTool } from '../src/agent/agent-tool';
import { ToolRegistry } from '../src/agent/tool-registry';
import { PROVIDER_ERROR_MESSAGES } from '../src/llm-settings/provider-errors';
import { FakeAnthropicServer } from './support/fake-anthropic-server';
import { FakeModelServer } from './support/fake-model-server';
import { startTestApp, type TestApp } from './support/test-app';
import { joinedDeltas, WsTestClient } from './support/ws-client';

const OPENAI = { provider: 'openai_compatible', model: 'fake-model' };
const CLAUDE = { provider: 'anthropic', model: 'claude-sonnet-4-5' };
const joinedReasoning = (events: readonly ServerEvent[]) => events.map((e) => (e.event === 'reasoning' ? e.text : '')).join('');
const errorOf = (events: readonly ServerEvent[]) => events.find((e) => e.event === 'error') as Extract<ServerEvent, { event: 'error' }> | undefined;
const sse = (payload: unknown, eol = '\n') => `data: ${JSON.stringify(payload)}${eol}${eol}`;

describe('provider streams as recorded', () => {
  let t: TestApp;
  let openai: FakeModelServer;
  let claude: FakeAnthropicServer;
  let client: WsTestClient;
  let counter = 0;
  const newChatId = () => `recorded-${++counter}`;
  const probed: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    openai = await FakeModelServer.start();
    claude = await FakeAnthropicServer.start();
    t = await startTestApp();
    await request(t.httpUrl)
      .put('/api/settings/llm')
      .send({
        openai_compatible: { base_url: openai.baseUrl, api_key: 'sk-test-fake-key-0123456789' },
        ollama: {},
        anthropic: { base_url: claude.baseUrl, api_key: claude.apiKey },
      })
      .expect(200);
    const probe: AgentTool = {
      name: 'probe_tool',
      description: 'test tool',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      readOnly: true,
      execute: (args) => {
        probed.push(args);
        return Promise.resolve(`probed ${String(args['path'])}`);
      },
    };
    t.app.get(ToolRegistry).register(probe);
  });

  afterAll(async () => {
    await t?.close();
    await openai?.close();
    await claude?.close();
  });

  beforeEach(async () => {
    openai.reset();
    claude.reset();
    probed.length = 0;
    client = await WsTestClient.connect(t.wsUrl);
  });

  afterEach(async () => {
    await client.close();
  });

  async function turn(chatId: string, content: string, llm: { provider: string; model: string } = OPENAI): Promise<ServerEvent[]> {
    const before = client.chatEvents(chatId).length;
    const end = Promise.race([client.next('done', (e) => e.chat_id === chatId), client.next('error', (e) => e.chat_id === chatId)]);
    client.sendMessage(chatId, content, llm);
    await end;
    return client.chatEvents(chatId).slice(before);
  }

  async function rows(chatId: string): Promise<Array<Record<string, unknown>>> {
    return (await request(t.httpUrl).get(`/api/sessions/${chatId}/messages`).expect(200)).body.messages as Array<Record<string, unknown>>;
  }

  describe('OpenAI-compatible servers', () => {
    const base = { id: 'gen-1733', object: 'chat.completion.chunk', created: 1733300000, model: 'deepseek/deepseek-r1' };

    it('Scenario: OpenRouter comments, empty keep-alive events and reasoning with reasoning_details stream as one answer', async () => {
      const chatId = newChatId();
      openai.enqueue({
        rawSse: [
          ': OPENROUTER PROCESSING\n\n',
          ': OPENROUTER PROCESSING\n\n',
          sse({ ...base, provider: 'DeepInfra', choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning: 'Weigh it', reasoning_details: [{ type: 'reasoning.text', text: 'Weigh it', format: 'unknown', index: 0 }] }, finish_reason: null, native_finish_reason: null, logprobs: null }] }),
          'data: \n\n',
          sse({ ...base, provider: 'DeepInfra', choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning: ' up.', reasoning_details: [{ type: 'reasoning.text', text: ' up.', format: 'unknown', index: 0 }] }, finish_reason: null, native_finish_reason: null, logprobs: null }] }),
          ': OPENROUTER PROCESSING\n\n',
          sse({ ...base, provider: 'DeepInfra', choices: [{ index: 0, delta: { role: 'assistant', content: 'Routed answer.', reasoning: null }, finish_reason: null, native_finish_reason: null, logprobs: null }] }),
          sse({ ...base, provider: 'DeepInfra', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop', native_finish_reason: 'stop', logprobs: null }] }),
          sse({ ...base, provider: 'DeepInfra', choices: [], usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40, cost: 0.0001, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 5 } } }),
          'data: [DONE]\n\n',
        ],
      });
      const events = await turn(chatId, 'Route it');
      expect(joinedReasoning(events)).toBe('Weigh it up.');
      expect(joinedDeltas(events)).toBe('Routed answer.');
      expect(events.at(-1)).toMatchObject({ event: 'done', usage: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 } });
    });

    it("Scenario: DeepSeek's keep-alive comments, null fields and cache usage make a normal answer", async () => {
      const chatId = newChatId();
      const ds = { id: '5f0c', object: 'chat.completion.chunk', created: 1733300000, model: 'deepseek-reasoner', system_fingerprint: 'fp_7e0991cad4_prod0820_fp8_kvcache' };
      openai.enqueue({
        rawSse: [
          ': keep-alive\n\n',
          sse({ ...ds, choices: [{ index: 0, delta: { role: 'assistant', content: null, reasoning_content: '' }, logprobs: null, finish_reason: null }] }),
          sse({ ...ds, choices: [{ index: 0, delta: { content: null, reasoning_content: 'Deep thought.' }, logprobs: null, finish_reason: null }] }),
          sse({ ...ds, choices: [{ index: 0, delta: { content: 'Deep answer.', reasoning_content: null }, logprobs: null, finish_reason: null }] }),
          sse({
            ...ds,
            choices: [{ index: 0, delta: { content: '', reasoning_content: null }, logprobs: null, finish_reason: 'stop' }],
            usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 3 }, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 12 },
          }),
          'data: [DONE]\n\n',
        ],
      });
      const events = await turn(chatId, 'Think deeply');
      expect(joinedReasoning(events)).toBe('Deep thought.');
      expect(joinedDeltas(events)).toBe('Deep answer.');
      expect(events.at(-1)).toMatchObject({ event: 'done', usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
    });

    it("Scenario: llama.cpp's CRLF stream with content null, timings and a [DONE] without a blank line is a complete answer", async () => {
      const chatId = newChatId();
      const lc = { created: 1750271648, id: 'chatcmpl-PZ5ZD8fq', model: '', system_fingerprint: 'b1-a414a44', object: 'chat.completion.chunk' };
      openai.enqueue({
        rawSse: [
          sse({ choices: [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }], ...lc }, '\r\n'),
          sse({ choices: [{ finish_reason: null, index: 0, delta: { reasoning_content: 'Local thought.' } }], ...lc }, '\r\n'),
          // one write cut inside a CRLF pair and inside a multi-byte character
          'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Local ',
          'ansẅer."}}],"created":1750271648,"id":"chatcmpl-PZ5ZD8fq","model":"","object":"chat.completion.chunk"}\r',
          '\n\r\n',
          sse(
            {
              choices: [{ finish_reason: 'stop', index: 0, delta: {} }],
              ...lc,
              usage: { completion_tokens: 4, prompt_tokens: 20, total_tokens: 24 },
              timings: { prompt_n: 20, prompt_ms: 41.2, prompt_per_second: 485.4, predicted_n: 4, predicted_ms: 50.1, predicted_per_second: 79.8 },
            },
            '\r\n',
          ),
          'data: [DONE]',
        ],
      });
      const events = await turn(chatId, 'Run locally');
      expect(joinedReasoning(events)).toBe('Local thought.');
      expect(joinedDeltas(events)).toBe('Local ansẅer.');
      expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false, usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 } });
    });

    it("Scenario: llama.cpp's error field inside a 200 stream fails the call as a context-length error", async () => {
      const chatId = newChatId();
      openai.enqueue({
        rawSse: [
          'error: {"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}\n\n',
          'data: [DONE]\n\n',
        ],
      });
      const events = await turn(chatId, 'Too long');
      expect(errorOf(events)).toMatchObject({ code: 'context_length', detail: PROVIDER_ERROR_MESSAGES.context_length });
      // not retried: one request
      expect(openai.completions.filter((r) => (r.body as { stream?: boolean }).stream === true)).toHaveLength(1);
    });

    it("Scenario: vLLM's error object inside a 200 stream fails the call with a clear error", async () => {
      const chatId = newChatId();
      openai.enqueue({
        rawChunks: [
          {
            object: 'error',
            message: "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens. Please reduce the length of the messages.",
            type: 'BadRequestError',
            param: null,
            code: 400,
          },
        ],
      });
      const events = await turn(chatId, 'Too long for vLLM');
      const error = errorOf(events);
      expect(error).toMatchObject({ code: 'context_length', detail: PROVIDER_ERROR_MESSAGES.context_length });
      expect(error?.detail).not.toContain('32768');
      expect(events.some((e) => e.event === 'done')).toBe(false);
    });

    it('Scenario: an error body forwarded into the stream without SSE framing fails the call', async () => {
      const chatId = newChatId();
      // a proxy that writes its backend's error body into the open 200 stream as it is, then closes it
      openai.enqueue({
        rawSse: [
          '{"error":{"code":400,"message":"request (6009 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":6009,"n_ctx":4096}}',
        ],
      });
      const events = await turn(chatId, 'Proxied');
      expect(errorOf(events)).toMatchObject({ code: 'context_length', detail: PROVIDER_ERROR_MESSAGES.context_length });
    });

    it("Scenario: Ollama's whole tool calls with finish_reason stop run, and role in every chunk changes nothing", async () => {
      const chatId = newChatId();
      const ol = { id: 'chatcmpl-712', object: 'chat.completion.chunk', created: 1733300000, model: 'qwen3:8b', system_fingerprint: 'fp_ollama' };
      openai.enqueue(
        {
          rawSse: [
            sse({ ...ol, choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning: 'Probe both.' }, finish_reason: null }] }),
            sse({ ...ol, choices: [{ index: 0, delta: { role: 'assistant', content: '', tool_calls: [{ id: 'call_q1', index: 0, type: 'function', function: { name: 'probe_tool', arguments: '{"path":"a"}' } }] }, finish_reason: null }] }),
            sse({ ...ol, choices: [{ index: 0, delta: { role: 'assistant', content: '', tool_calls: [{ id: 'call_q2', index: 1, type: 'function', function: { name: 'probe_tool', arguments: '{"path":"b"}' } }] }, finish_reason: null }] }),
            sse({ ...ol, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] }),
            sse({ ...ol, choices: [], usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 } }),
            'data: [DONE]\n\n',
          ],
        },
        { content: 'Both probed.' },
      );
      const events = await turn(chatId, 'Probe a and b');
      expect(probed).toEqual([{ path: 'a' }, { path: 'b' }]);
      expect(joinedDeltas(events)).toBe('Both probed.');
    });
    it('Scenario: a server that ignores stream true and answers one JSON body gives the same answer and tool calls', async () => {
      const chatId = newChatId();
      openai.enqueue(
        {
          wholeBody: {
            id: 'chatcmpl-whole',
            object: 'chat.completion',
            created: 1733300000,
            model: 'fake-model',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: null, reasoning_content: 'One body.', tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'probe_tool', arguments: '{"path":"w"}' } }] },
                finish_reason: 'tool_calls',
              },
            ],
            usage: { prompt_tokens: 14, completion_tokens: 6, total_tokens: 20 },
          },
        },
        { wholeBody: { id: 'chatcmpl-whole-2', object: 'chat.completion', created: 1733300001, model: 'fake-model', choices: [{ index: 0, message: { role: 'assistant', content: 'Whole answer.' }, finish_reason: 'stop' }] } },
      );
      const events = await turn(chatId, 'No streaming here');
      expect(probed).toEqual([{ path: 'w' }]);
      expect(joinedReasoning(events)).toBe('One body.');
      expect(joinedDeltas(events)).toBe('Whole answer.');
      expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false });
    });

    it("Scenario: Azure's prompt-filter chunk without choices and Groq's usage in x_groq are read", async () => {
      const chatId = newChatId();
      openai.enqueue({
        rawChunks: [
          { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] },
          { id: 'chatcmpl-g', object: 'chat.completion.chunk', created: 1, model: 'llama-3.3-70b-versatile', system_fingerprint: 'fp_g', x_groq: { id: 'req_01' }, choices: [{ index: 0, delta: { role: 'assistant', content: 'Fast answer.' }, logprobs: null, finish_reason: null }] },
          {
            id: 'chatcmpl-g',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'llama-3.3-70b-versatile',
            choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }],
            x_groq: { id: 'req_01', usage: { queue_time: 0.02, prompt_tokens: 33, prompt_time: 0.001, completion_tokens: 3, completion_time: 0.01, total_tokens: 36, total_time: 0.011 } },
          },
        ],
      });
      const events = await turn(chatId, 'Fast');
      expect(joinedDeltas(events)).toBe('Fast answer.');
      expect(events.at(-1)).toMatchObject({ event: 'done', usage: { prompt_tokens: 33, completion_tokens: 3, total_tokens: 36 } });
    });
    it("Scenario: OpenAI's refusal delta is the answer text", async () => {
      const chatId = newChatId();
      const oa = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-2024-08-06', service_tier: 'default', system_fingerprint: 'fp_r' };
      openai.enqueue({
        rawChunks: [
          { ...oa, choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, logprobs: null, finish_reason: null }], obfuscation: 'x1' },
          { ...oa, choices: [{ index: 0, delta: { refusal: "I'm sorry, I can't help with that." }, logprobs: null, finish_reason: null }], obfuscation: 'Yz' },
          { ...oa, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], obfuscation: 'q' },
        ],
      });
      const events = await turn(chatId, 'Refuse me');
      expect(joinedDeltas(events)).toBe("I'm sorry, I can't help with that.");
      expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false });
    });
  });

  describe('Anthropic', () => {
    const start = (id: string) => ({
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id, type: 'message', role: 'assistant', content: [], model: CLAUDE.model, stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } },
      },
    });
    const ev = (event: string, data: Record<string, unknown> = {}) => ({ event, data: { type: event, ...data } });
    const end = (stopReason: string, extra: Record<string, unknown> = {}) => [
      ev('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null, ...extra }, usage: { output_tokens: 15 } }),
      ev('message_stop'),
    ];

    it('Scenario: Anthropic pings, redacted thinking and citation deltas leave the answer text and reasoning intact', async () => {
      const chatId = newChatId();
      claude.enqueue({
        rawEvents: [
          start('msg_rec_1'),
          ev('ping'),
          ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Check the source.' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' } }),
          ev('content_block_stop', { index: 0 }),
          ev('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' } }),
          ev('content_block_stop', { index: 1 }),
          ev('ping'),
          ev('content_block_start', { index: 2, content_block: { type: 'text', text: '', citations: [] } }),
          ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'The sky is blue' } }),
          ev('content_block_delta', { index: 2, delta: { type: 'citations_delta', citation: { type: 'char_location', cited_text: 'blue', document_index: 0, start_char_index: 0, end_char_index: 4 } } }),
          ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: '.' } }),
          ev('content_block_stop', { index: 2 }),
          ...end('end_turn'),
        ],
      });
      const events = await turn(chatId, 'Colour?', CLAUDE);
      expect(joinedReasoning(events)).toBe('Check the source.');
      expect(joinedDeltas(events)).toBe('The sky is blue.');
      expect(events.at(-1)).toMatchObject({ event: 'done', cancelled: false });
    });

    it('Scenario: an Anthropic refusal ends the turn with a clear error and the refused answer is not sent again', async () => {
      const chatId = newChatId();
      claude.enqueue({
        rawEvents: [
          start('msg_rec_2'),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Here is how to REFUSED-PART' } }),
          ev('content_block_stop', { index: 0 }),
          ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_ref', name: 'probe_tool', input: {} } }),
          ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":' } }),
          ...end('refusal', { stop_details: { type: 'refusal', category: 'cyber', explanation: null } }),
        ],
      });
      const events = await turn(chatId, 'Something refused', CLAUDE);
      expect(errorOf(events)).toMatchObject({ code: 'fatal', detail: PROVIDER_ERROR_MESSAGES.refusal });
      expect(probed).toEqual([]);
      // the next turn does not carry the refused text: the conversation goes on without it
      claude.enqueue({ text: 'A fresh answer.' });
      const next = await turn(chatId, 'Something else', CLAUDE);
      expect(joinedDeltas(next)).toBe('A fresh answer.');
      expect(claude.messages.at(-1)?.raw).not.toContain('REFUSED-PART');
      expect((await rows(chatId)).map((row) => row['content'])).not.toContain('Here is how to REFUSED-PART');
    });

    it('Scenario: an Anthropic pause_turn answer is marked truncated and continue sends it back', async () => {
      const chatId = newChatId();
      claude.enqueue({
        rawEvents: [
          start('msg_rec_3'),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Paused here' } }),
          ev('content_block_stop', { index: 0 }),
          ...end('pause_turn'),
        ],
      });
      const events = await turn(chatId, 'Long job', CLAUDE);
      expect(events.at(-1)).toMatchObject({ event: 'done', truncated: true });
      claude.enqueue({ text: ' and resumed.' });
      const done = client.next('done', (e) => e.chat_id === chatId);
      client.send({ type: 'chat_action', chat_id: chatId, action: 'continue', metadata: { llm: CLAUDE } });
      await done;
      const continued = claude.messages.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
      expect(continued.messages.at(-2)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Paused here' }] });
      expect((await rows(chatId)).at(-1)).toMatchObject({ content: 'Paused here and resumed.' });
    });

    it('Scenario: an Anthropic stream cut before its end is retried while nothing was shown, else ends as interrupted', async () => {
      const chatId = newChatId();
      const cut = (text: string) => ({
        rawEvents: [
          start('msg_cut'),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ...(text !== '' ? [ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })] : []),
        ],
      });
      claude.enqueue(cut(''), { text: 'Second try.' });
      expect(joinedDeltas(await turn(chatId, 'Cut early', CLAUDE))).toBe('Second try.');
      expect(claude.messages).toHaveLength(2);
      claude.enqueue(cut('Cut in the'), { text: 'never asked for' });
      const events = await turn(chatId, 'Cut late', CLAUDE);
      expect(errorOf(events)).toMatchObject({ code: 'transient', detail: `The model stream was interrupted: ${PROVIDER_ERROR_MESSAGES.transient}` });
      expect(claude.messages).toHaveLength(3);
    });

    it('Scenario: an Anthropic overloaded error after text ends the turn as interrupted, without a retry', async () => {
      const chatId = newChatId();
      claude.enqueue({ text: 'Half an answer', streamError: 'overloaded_error' }, { text: 'never asked for' });
      const events = await turn(chatId, 'Overload me', CLAUDE);
      expect(joinedDeltas(events)).toBe('Half an answer');
      expect(errorOf(events)).toMatchObject({ code: 'transient', detail: `The model stream was interrupted: ${PROVIDER_ERROR_MESSAGES.transient}` });
      expect(claude.messages).toHaveLength(1);
    });
  });
});
