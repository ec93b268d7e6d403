/**
 * The tools of the CashCode test MCP servers. Every server has `say_hello` (→ `Hello, Cash`). With
 * `CASHCODE_MCP_TEST_TOOLS=1` in the environment a server also offers the tools the API's tests need (structured
 * content, a slow call, progress notifications, its pid, a tool that adds a tool); `CASHCODE_MCP_EXTRA_TOOLS=N` adds N
 * generated tools (benchmarks). Servers log to stderr only: stdout is the protocol channel of the stdio server.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export interface TestServerOptions {
  name: string;
  /** add the test-only tools */
  testTools?: boolean;
  /** add this many generated tools (`tool_00001` …) */
  extraTools?: number;
}

export const HELLO_TEXT = 'Hello, Cash';

/** Options from the environment: `CASHCODE_MCP_TEST_TOOLS=1`, `CASHCODE_MCP_EXTRA_TOOLS=<n>`. */
export function optionsFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): TestServerOptions {
  const extra = Number.parseInt(env['CASHCODE_MCP_EXTRA_TOOLS'] ?? '0', 10);
  return {
    name,
    testTools: env['CASHCODE_MCP_TEST_TOOLS'] === '1',
    extraTools: Number.isFinite(extra) && extra > 0 ? Math.min(extra, 100_000) : 0,
  };
}

function text(value: string) {
  return { content: [{ type: 'text' as const, text: value }] };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('cancelled'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const EXTRA_TOPICS = ['weather', 'calendar', 'files', 'mail', 'search', 'notes', 'tickets', 'music', 'maps', 'stocks'];
const EXTRA_VERBS = ['get', 'list', 'create', 'update', 'delete', 'find', 'sync', 'export'];

/** A new MCP server instance with the test tools (one instance per connection). */
export function createTestServer(options: TestServerOptions): McpServer {
  const server = new McpServer({ name: options.name, version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });

  server.registerTool(
    'say_hello',
    { title: 'Say hello', description: 'Say hello to Cash.', annotations: { readOnlyHint: true, idempotentHint: true } },
    () => text(HELLO_TEXT),
  );

  if (options.testTools) {
    server.registerTool(
      'shout',
      {
        description: 'Return the text in upper case, also as structured content.',
        inputSchema: { text: z.string().describe('text to shout'), times: z.number().int().nullable().optional() },
        outputSchema: { upper: z.string(), length: z.number() },
      },
      ({ text: input, times }) => {
        const upper = input.toUpperCase().repeat(times ?? 1);
        return { ...text(upper), structuredContent: { upper, length: upper.length } };
      },
    );
    server.registerTool('get_pid', { description: 'Return the process id of this server.' }, () =>
      text(String(process.pid)),
    );
    server.registerTool(
      'sleep_ms',
      { description: 'Wait for the given milliseconds, then answer.', inputSchema: { ms: z.number().int().min(0) } },
      async ({ ms }, extra) => {
        await sleep(ms, extra.signal);
        return text(`slept ${ms} ms`);
      },
    );
    server.registerTool(
      'progress_sleep',
      {
        description: 'Wait `steps` × `step_ms` milliseconds, sending a progress notification after every step.',
        inputSchema: { steps: z.number().int().min(1), step_ms: z.number().int().min(0) },
      },
      async ({ steps, step_ms }, extra) => {
        const token = extra._meta?.progressToken;
        for (let step = 1; step <= steps; step++) {
          await sleep(step_ms, extra.signal);
          if (token !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, total: steps },
            });
          }
        }
        return text(`done after ${steps} steps`);
      },
    );
    server.registerTool(
      'fail',
      {
        description: 'Always answer with a tool error.',
        inputSchema: { message: z.string() },
        annotations: { destructiveHint: true, openWorldHint: false },
      },
      ({ message }) => ({ ...text(message), isError: true }),
    );
    server.registerTool(
      'add_tool',
      { description: 'Register a new tool `name` (the server announces tools/list_changed).', inputSchema: { name: z.string() } },
      ({ name }) => {
        server.registerTool(name, { description: `Added at runtime: ${name}.` }, () => text(`${name} says hi`));
        return text(`added ${name}`);
      },
    );
  }

  for (let index = 1; index <= (options.extraTools ?? 0); index++) {
    const topic = EXTRA_TOPICS[index % EXTRA_TOPICS.length]!;
    const verb = EXTRA_VERBS[index % EXTRA_VERBS.length]!;
    const name = `${verb}_${topic}_${String(index).padStart(5, '0')}`;
    server.registerTool(
      name,
      {
        description: `${verb} ${topic} records, variant ${index}.`,
        inputSchema: { query: z.string().optional(), limit: z.number().int().optional() },
      },
      () => text(name),
    );
  }
  return server;
}
