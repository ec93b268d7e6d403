import { reconnectDelayMs, RECONNECT_MAX_MS } from './mcp-connection-parts';
import { MCP_STREAM_DISPATCHER_OPTIONS, mcpStreamAgent } from './mcp-transports';

/** The options an undici Agent was built with (kept under its `Symbol(options)`). */
function agentOptions(agent: object): Record<string, unknown> {
  const symbol = Object.getOwnPropertySymbols(agent).find((s) => s.description === 'options');
  return (agent as Record<symbol, Record<string, unknown>>)[symbol!]!;
}

describe('MCP network transports', () => {
  it('Scenario: the network transports fetch without a body timeout', async () => {
    expect(MCP_STREAM_DISPATCHER_OPTIONS.bodyTimeout).toBe(0);
    const agent = mcpStreamAgent();
    expect(agentOptions(agent)['bodyTimeout']).toBe(0);
    expect(mcpStreamAgent()).toBe(agent);
    await agent.close();
  });

  it('Scenario: the reconnect backoff doubles from half a second to at most thirty seconds with jitter', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const nominal = Math.min(RECONNECT_MAX_MS, 500 * 2 ** (attempt - 1));
      const low = reconnectDelayMs(attempt, 0);
      const high = reconnectDelayMs(attempt, 0.999999);
      expect(low).toBe(Math.round(nominal * 0.75));
      expect(high).toBeLessThanOrEqual(Math.min(RECONNECT_MAX_MS, Math.round(nominal * 1.25)));
      expect(high).toBeGreaterThan(low);
    }
    expect(reconnectDelayMs(1, 0.5)).toBe(500);
    expect(reconnectDelayMs(50, 0.999)).toBe(RECONNECT_MAX_MS);
  });
});
