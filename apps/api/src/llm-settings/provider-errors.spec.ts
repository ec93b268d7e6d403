import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from 'openai';
import {
  PROVIDER_ERROR_MESSAGES,
  classifyProviderError,
  isExpectedProviderFailure,
  parseRetryAfterMs,
  probeErrorMessage,
} from './provider-errors';
import { createProviderClient } from './provider-client';

const SECRET_KEY = 'sk-secret-key-123456';

function headers(values: Record<string, string> = {}): Headers {
  return new Headers(values);
}

interface Scripted {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  hang?: boolean;
}

describe('classifyProviderError', () => {
  describe('with SDK error objects', () => {
    it('Scenario: 401 and 403 are authentication failures', () => {
      const auth = new AuthenticationError(401, { message: `bad key ${SECRET_KEY}` }, undefined, headers());
      const denied = new PermissionDeniedError(403, { message: 'nope' }, undefined, headers());
      for (const err of [auth, denied]) {
        const result = classifyProviderError(err);
        expect(result).toEqual({
          kind: 'auth',
          retryable: false,
          retryAfterMs: null,
          message: PROVIDER_ERROR_MESSAGES.auth,
        });
        expect(result.message).not.toContain(SECRET_KEY);
      }
    });

    it('Scenario: 429 is a retryable rate limit with Retry-After in seconds', () => {
      const err = new RateLimitError(429, { message: 'slow down' }, undefined, headers({ 'retry-after': '2' }));
      expect(classifyProviderError(err)).toEqual({
        kind: 'rate_limit',
        retryable: true,
        retryAfterMs: 2000,
        message: PROVIDER_ERROR_MESSAGES.rate_limit,
      });
    });

    it('Scenario: retry-after-ms wins over Retry-After', () => {
      const err = new RateLimitError(
        429,
        { message: 'slow down' },
        undefined,
        headers({ 'retry-after': '10', 'retry-after-ms': '1500' }),
      );
      expect(classifyProviderError(err).retryAfterMs).toBe(1500);
    });

    it('Scenario: 429 with insufficient_quota is a non-retryable quota error', () => {
      const byCode = new RateLimitError(
        429,
        { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
        undefined,
        headers({ 'retry-after': '1' }),
      );
      const byText = new RateLimitError(429, { message: 'You exceeded your current quota, please check your plan' },
        undefined, headers());
      for (const err of [byCode, byText]) {
        expect(classifyProviderError(err)).toEqual({
          kind: 'quota',
          retryable: false,
          retryAfterMs: null,
          message: PROVIDER_ERROR_MESSAGES.quota,
        });
      }
    });

    it('Scenario: a connection timeout is a retryable timeout', () => {
      expect(classifyProviderError(new APIConnectionTimeoutError())).toMatchObject({ kind: 'timeout', retryable: true });
    });

    it('Scenario: 400 context_length_exceeded is a context_length error', () => {
      const byCode = new BadRequestError(
        400,
        { message: 'too long', code: 'context_length_exceeded' },
        undefined,
        headers(),
      );
      const byText = new BadRequestError(
        400,
        { message: "This model's maximum context length is 8192 tokens" },
        undefined,
        headers(),
      );
      for (const err of [byCode, byText]) {
        expect(classifyProviderError(err)).toMatchObject({ kind: 'context_length', retryable: false });
      }
    });

    it('Scenario: other 400s and 404 are fatal', () => {
      expect(classifyProviderError(new BadRequestError(400, { message: 'bad' }, undefined, headers()))).toMatchObject(
        { kind: 'fatal', retryable: false, message: PROVIDER_ERROR_MESSAGES.fatal },
      );
      expect(classifyProviderError(new NotFoundError(404, { message: 'no model' }, undefined, headers())).kind).toBe(
        'fatal',
      );
    });

    it('Scenario: 5xx is transient and keeps Retry-After', () => {
      const err = new InternalServerError(503, { message: 'overloaded' }, undefined, headers({ 'retry-after': '3' }));
      expect(classifyProviderError(err)).toEqual({
        kind: 'transient',
        retryable: true,
        retryAfterMs: 3000,
        message: PROVIDER_ERROR_MESSAGES.transient,
      });
    });

    it('Scenario: a connection error is transient', () => {
      const err = new APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
      expect(classifyProviderError(err)).toMatchObject({ kind: 'transient', retryable: true });
      expect(isExpectedProviderFailure(err)).toBe(true);
    });

    it('Scenario: a user abort is cancelled, an abort caused by a timeout is a timeout', () => {
      expect(classifyProviderError(new APIUserAbortError()).kind).toBe('cancelled');
      const abort = new DOMException('This operation was aborted', 'AbortError');
      expect(classifyProviderError(abort)).toMatchObject({ kind: 'cancelled', retryable: false });
      const timedOut = Object.assign(new Error('aborted'), {
        name: 'AbortError',
        cause: new DOMException('signal timed out', 'TimeoutError'),
      });
      expect(classifyProviderError(timedOut).kind).toBe('timeout');
      expect(classifyProviderError(new DOMException('signal timed out', 'TimeoutError')).kind).toBe('timeout');
    });

    it('Scenario: an error event inside a stream is classified from its body', () => {
      const err = new APIError(undefined, { message: 'ctx', code: 'context_length_exceeded' }, undefined, headers());
      expect(classifyProviderError(err).kind).toBe('context_length');
      const other = new APIError(undefined, { message: 'weird' }, undefined, headers());
      expect(classifyProviderError(other).kind).toBe('fatal');
    });

    it('Scenario: unknown values are fatal and never echo their text', () => {
      for (const value of [new Error(`boom ${SECRET_KEY}`), 'text', null, 42]) {
        const result = classifyProviderError(value);
        expect(result.kind).toBe('fatal');
        expect(result.message).not.toContain(SECRET_KEY);
      }
      expect(isExpectedProviderFailure(new Error('boom'))).toBe(false);
    });
  });

  describe('parseRetryAfterMs', () => {
    it('Scenario: parses seconds, milliseconds and HTTP dates; ignores garbage', () => {
      const now = Date.parse('2025-01-01T00:00:00Z');
      expect(parseRetryAfterMs(headers({ 'retry-after': '1.5' }), now)).toBe(1500);
      expect(parseRetryAfterMs(headers({ 'retry-after-ms': '250' }), now)).toBe(250);
      expect(parseRetryAfterMs(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
      expect(parseRetryAfterMs(headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:05 GMT' }), now)).toBe(0);
      expect(parseRetryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeNull();
      expect(parseRetryAfterMs(headers({ 'retry-after': '-1' }), now)).toBeNull();
      expect(parseRetryAfterMs({ 'Retry-After': '2' }, now)).toBe(2000);
      expect(parseRetryAfterMs(undefined, now)).toBeNull();
    });
  });

  describe('against a real HTTP server through the openai client', () => {
    let server: Server;
    let baseUrl: string;
    let next: Scripted = { status: 200, body: {} };
    const pending: ServerResponse[] = [];

    beforeAll(async () => {
      server = createServer((req: IncomingMessage, res: ServerResponse) => {
        req.resume();
        if (next.hang) {
          pending.push(res);
          return;
        }
        res.writeHead(next.status, { 'content-type': 'application/json', ...(next.headers ?? {}) });
        res.end(JSON.stringify(next.body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });

    afterAll(async () => {
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    function client(timeout = 5000): ReturnType<typeof createProviderClient> {
      return createProviderClient({ baseURL: baseUrl, apiKey: SECRET_KEY, timeoutMs: timeout });
    }

    async function failure(call: Promise<unknown>): Promise<unknown> {
      try {
        await call;
      } catch (err) {
        return err;
      }
      throw new Error('expected the call to fail');
    }

    it('Scenario: the model server answers 401 → auth, probe says authentication failed', async () => {
      next = { status: 401, body: { error: { message: `Incorrect API key ${SECRET_KEY}`, code: 'invalid_api_key' } } };
      const err = await failure(client().models.list());
      expect(classifyProviderError(err).kind).toBe('auth');
      expect(probeErrorMessage(err)).toBe(PROVIDER_ERROR_MESSAGES.auth);
    });

    it('Scenario: the model server answers 429 with retry-after → rate_limit, probe says busy', async () => {
      next = { status: 429, body: { error: { message: 'Rate limit reached' } }, headers: { 'retry-after': '4' } };
      const err = await failure(client().models.list());
      expect(classifyProviderError(err)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 4000, retryable: true });
      expect(probeErrorMessage(err)).toBe(PROVIDER_ERROR_MESSAGES.rate_limit);
    });

    it('Scenario: the model server answers 500 → transient, probe says generic failure', async () => {
      next = { status: 500, body: { error: { message: 'internal' } } };
      const err = await failure(client().models.list());
      expect(classifyProviderError(err)).toMatchObject({ kind: 'transient', retryable: true });
      expect(probeErrorMessage(err)).toBe(PROVIDER_ERROR_MESSAGES.probe_generic);
    });

    it('Scenario: the model server does not answer in time → timeout', async () => {
      next = { status: 200, body: {}, hang: true };
      const err = await failure(client(200).models.list());
      expect(err).toBeInstanceOf(APIConnectionTimeoutError);
      expect(classifyProviderError(err).kind).toBe('timeout');
      expect(probeErrorMessage(err)).toBe(PROVIDER_ERROR_MESSAGES.timeout);
    });

    it('Scenario: nothing listens on the port → cannot connect', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const dead = createProviderClient({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: SECRET_KEY, timeoutMs: 5000 });
      const err = await failure(dead.models.list());
      expect(classifyProviderError(err)).toMatchObject({ kind: 'transient', retryable: true });
      expect(probeErrorMessage(err)).toBe(PROVIDER_ERROR_MESSAGES.connection);
      expect(isExpectedProviderFailure(err)).toBe(true);
    });

    it('Scenario: a user abort through an AbortSignal → cancelled', async () => {
      next = { status: 200, body: {}, hang: true };
      const controller = new AbortController();
      const call = client().models.list({ signal: controller.signal });
      setImmediate(() => controller.abort());
      const err = await failure(call);
      expect(classifyProviderError(err).kind).toBe('cancelled');
    });
  });
});
