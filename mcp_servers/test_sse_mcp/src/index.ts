#!/usr/bin/env node
/**
 * CashCode test MCP server over SSE, by default on http://127.0.0.1:8090/sse (`npm run mcp:sse` from the repo root).
 * Tool `say_hello` → `Hello, Cash`. Options: --host, --port (0 = any free port), --require-header Name=Value.
 */
import { optionsFromEnv, runHttpMain, startSseServer } from '@cashcode/mcp-test-kit';

runHttpMain('test_sse_mcp', startSseServer, optionsFromEnv('test_sse_mcp'), 8090).catch((error: unknown) => {
  process.stderr.write(`test_sse_mcp failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
