#!/usr/bin/env node
/**
 * CashCode test MCP server over stdio: `say_hello` → `Hello, Cash` (plus the test tools with
 * CASHCODE_MCP_TEST_TOOLS=1). stdout carries protocol frames only; diagnostics go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createTestServer, optionsFromEnv } from '@cashcode/mcp-test-kit';

async function main(): Promise<void> {
  const server = createTestServer(optionsFromEnv('test_stdio_mcp'));
  const transport = new StdioServerTransport();
  transport.onclose = () => process.exit(0);
  await server.connect(transport);
  process.stdin.once('end', () => process.exit(0));
  process.stderr.write('test_stdio_mcp ready\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`test_stdio_mcp failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
