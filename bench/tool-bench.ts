/**
 * In-process tool dispatch overhead: ToolRegistry.execute (argument parsing, lookup, projection, failure detection,
 * abort race) over a trivial tool, against calling the same tool directly.
 */
import { ToolRegistry } from '../apps/api/src/agent/tool-registry';
import type { AgentTool } from '../apps/api/src/agent/agent-tool';
import type { Figure } from './server-bench';

const echo: AgentTool = {
  name: 'echo',
  description: 'returns its input',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  readOnly: true,
  execute: async (args) => String(args['text']),
};

export async function runToolBench(log: (line: string) => void): Promise<Figure[]> {
  const registry = new ToolRegistry();
  registry.register(echo);
  for (let i = 0; i < 40; i++) registry.register({ ...echo, name: `tool_${i}` });
  const ctx = { chatId: 'bench', turnId: '0'.repeat(32), signal: new AbortController().signal };
  const scope = { chatId: 'bench', temporary: new Set<string>() };
  const args = JSON.stringify({ text: 'hello world' });
  const n = 20_000;
  for (let i = 0; i < 2000; i++) {
    await registry.execute('echo', args, ctx, scope);
    await echo.execute(JSON.parse(args) as Record<string, unknown>, ctx);
  }
  let started = performance.now();
  for (let i = 0; i < n; i++) await registry.execute('echo', args, ctx, scope);
  const viaRegistry = (performance.now() - started) / n;
  started = performance.now();
  for (let i = 0; i < n; i++) await echo.execute(JSON.parse(args) as Record<string, unknown>, ctx);
  const direct = (performance.now() - started) / n;
  const overhead = viaRegistry - direct;
  log(`tool dispatch overhead ${(overhead * 1000).toFixed(1)} µs per call`);
  return [
    { name: 'tool dispatch: registry call', value: viaRegistry * 1000, unit: 'µs' },
    { name: 'tool dispatch: direct call', value: direct * 1000, unit: 'µs' },
    { name: 'tool dispatch overhead per call', value: overhead, unit: 'ms', target: '≤ 0.5 ms', pass: overhead <= 0.5 },
  ];
}
