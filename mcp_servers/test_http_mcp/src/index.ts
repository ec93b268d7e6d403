#!/usr/bin/env node
/**
 * CashCode test MCP server over Streamable HTTP, by default on http://127.0.0.1:8091/mcp.
 * Tool `say_hello` → `Hello, Cash`. Options: --host, --port (0 = any free port), --require-header Name=Value.
 */
import { optionsFromEnv, runHttpMain, startStreamableHttpServer } from '@cashcode/mcp-test-kit';

runHttpMain('test_http_mcp', startStreamableHttpServer, optionsFromEnv('test_http_mcp'), 8091).catch(
  (error: unknown) => {
    process.stderr.write(`test_http_mcp failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
