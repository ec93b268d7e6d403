/**
 * The MCP SDK, loaded on first use. Its modules (the client, the transports and the zod schemas of types.js) cost
 * a noticeable part of the server's start-up time and idle memory, and a server without MCP connections never needs
 * them: the code that connects, frames stdio messages or classifies SDK errors asks for them here, when it runs.
 * (`require` keeps the SDK's CommonJS build: one module instance for every caller, so `instanceof` checks hold.)
 */
type ClientModule = typeof import('@modelcontextprotocol/sdk/client/index.js');
type SseModule = typeof import('@modelcontextprotocol/sdk/client/sse.js');
type StreamableHttpModule = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
type StdioClientModule = typeof import('@modelcontextprotocol/sdk/client/stdio.js');
type StdioSharedModule = typeof import('@modelcontextprotocol/sdk/shared/stdio.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');
type UndiciModule = typeof import('undici');

/* eslint-disable @typescript-eslint/no-require-imports -- deliberate lazy loading, see above */
export const mcpSdk = {
  client: (): ClientModule => require('@modelcontextprotocol/sdk/client/index.js') as ClientModule,
  sse: (): SseModule => require('@modelcontextprotocol/sdk/client/sse.js') as SseModule,
  streamableHttp: (): StreamableHttpModule =>
    require('@modelcontextprotocol/sdk/client/streamableHttp.js') as StreamableHttpModule,
  stdioClient: (): StdioClientModule => require('@modelcontextprotocol/sdk/client/stdio.js') as StdioClientModule,
  stdioShared: (): StdioSharedModule => require('@modelcontextprotocol/sdk/shared/stdio.js') as StdioSharedModule,
  types: (): TypesModule => require('@modelcontextprotocol/sdk/types.js') as TypesModule,
  /** undici (fetch and Agent of one version): the network transports' fetch (mcp-transports.ts) */
  undici: (): UndiciModule => require('undici') as UndiciModule,
};
/* eslint-enable @typescript-eslint/no-require-imports */
