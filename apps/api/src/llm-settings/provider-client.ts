/**
 * Builds the SDK clients for a provider connection (openspec llm-settings): `openai` clients for OpenAI-compatible
 * servers and Ollama, `@anthropic-ai/sdk` clients for Anthropic. The only place that constructs them.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { LlmProvider } from '@cashcode/contracts';
import { httpFetch } from './http-fetch';

/** The SDK client of a provider connection: its protocol follows from its class. */
export type ProviderClient = OpenAI | Anthropic;

/** The public Anthropic API (the default base URL of the `anthropic` provider). */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Whether a client speaks Anthropic's Messages API. */
export function isAnthropicClient(client: ProviderClient): client is Anthropic {
  return client instanceof Anthropic;
}

/** The `openai` client of a connection that speaks the OpenAI protocol; throws for another protocol. */
export function openAiClient(client: ProviderClient): OpenAI {
  if (client instanceof OpenAI) return client;
  throw new Error('this operation needs an OpenAI-compatible provider');
}

/** The key sent to Ollama's OpenAI-compatible endpoint (it ignores it, the SDK requires one). */
export const OLLAMA_API_KEY = 'ollama-local';

export interface ProviderClientOptions {
  /** the OpenAI-compatible base URL including any `/v1` path */
  baseURL: string;
  apiKey: string;
  timeoutMs: number;
}

/**
 * The SDK's fetch: httpFetch (node:http, see http-fetch.ts). fetch() rejections are not always `Error` instances of the SDK's realm (a DOMException from an aborted request is
 * not `instanceof Error` under some module loaders), which makes the SDK lose the "timed out" information. Re-throw
 * them as plain Errors keeping name, message and cause so the SDK and classifyProviderError see what happened.
 */
export const providerFetch: typeof fetch = async (input, init) => {
  try {
    return await httpFetch(input, init);
  } catch (err) {
    throw normaliseThrown(err);
  }
};

function normaliseThrown(err: unknown): Error {
  if (err instanceof Error) return err;
  if (typeof err === 'object' && err !== null) {
    const record = err as { name?: unknown; message?: unknown; cause?: unknown };
    const message = typeof record.message === 'string' ? record.message : 'fetch failed';
    const error = new Error(message, { cause: record.cause ?? err });
    if (typeof record.name === 'string') error.name = record.name;
    return error;
  }
  return new Error(String(err));
}

/**
 * A client with the configured timeout and no SDK retries: callers run their own classified retries. An empty key (a
 * keyless local server such as LM Studio or llama.cpp's server) sends no Authorization header at all: the SDK needs
 * some key, and a `null` default header removes the one it would build from it.
 */
export function createProviderClient(options: ProviderClientOptions): OpenAI {
  const keyless = options.apiKey === '';
  return new OpenAI({
    baseURL: options.baseURL,
    apiKey: keyless ? 'no-key' : options.apiKey,
    timeout: options.timeoutMs,
    maxRetries: 0,
    fetch: providerFetch,
    ...(keyless ? { defaultHeaders: { Authorization: null } } : {}),
  });
}

/** The connection values a provider's client is built from (keys already checked against their origins). */
export interface ProviderConnections {
  openaiCompatible: { baseUrl: string; apiKey: string };
  ollamaBaseUrl: string;
  anthropic: { baseUrl: string; apiKey: string };
  timeoutMs: number;
}

/** The client of one provider connection. */
export function createClientFor(provider: LlmProvider, connections: ProviderConnections): ProviderClient {
  const timeoutMs = connections.timeoutMs;
  switch (provider) {
    case 'openai_compatible':
      return createProviderClient({ baseURL: connections.openaiCompatible.baseUrl, apiKey: connections.openaiCompatible.apiKey, timeoutMs });
    case 'ollama':
      // Node's fetch does not use proxy environment variables, so a loopback Ollama is reached directly.
      return createProviderClient({ baseURL: `${connections.ollamaBaseUrl}/v1`, apiKey: OLLAMA_API_KEY, timeoutMs });
    case 'anthropic':
      return createAnthropicClient({ baseURL: connections.anthropic.baseUrl, apiKey: connections.anthropic.apiKey, timeoutMs });
  }
}

/**
 * An Anthropic client with the configured timeout and no SDK retries (the gateway retries, classified). The base URL
 * is the API's origin (and path prefix, for a proxy); the SDK adds `/v1/messages` and `/v1/models`.
 */
export function createAnthropicClient(options: ProviderClientOptions): Anthropic {
  return new Anthropic({
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    timeout: options.timeoutMs,
    maxRetries: 0,
    fetch: providerFetch,
  });
}
