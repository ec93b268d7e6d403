/**
 * `npm run bench -- poisoning`: the poisoning suite (apps/api/test/support/poisoning-suite.ts) against a real server
 * process and the fake model scripted to obey every injection: hostile pages, MCP tool results (server-everything over
 * stdio), attached files and Skill resources, in every phrasing of apps/api/test/fixtures/poisoning/phrasings.json,
 * each asking to remember, change SOUL.md, create a Skill or an automation. Channel messages of non-owners need the
 * in-process hook and are covered by the e2e spec (test/poisoning.e2e-spec.ts). Reports attempts, writes without the
 * owner's approval (target 0) and false prompts on owner-only turns (target 0).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeModelServer } from '../apps/api/test/support/fake-model-server';
import { runPoisoningSuite } from '../apps/api/test/support/poisoning-suite';
import { configure, startServer, type Figure } from './server-bench';

/** compiled to bench/dist/bench/*.js */
const ROOT = join(__dirname, '..', '..', '..');

export async function runPoisoningBench(log: (line: string) => void): Promise<Figure[]> {
  const fake = await FakeModelServer.start();
  const catalogDir = await mkdtemp(join(tmpdir(), 'cashcode-bench-poison-'));
  const catalog = join(catalogDir, 'mcp_config.json');
  const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js', { paths: [join(ROOT, 'apps', 'api')] });
  await writeFile(catalog, JSON.stringify({ everything: { type: 'stdio', display_name: 'Everything', command: 'node', args: [everything, 'stdio'] } }));
  const server = await startServer({ CASHCODE_FETCH_ALLOW_PRIVATE: 'true', CASHCODE_MCP_CATALOG: catalog, DREAM_INTERVAL: '0' });
  try {
    await configure(server, fake);
    const report = await runPoisoningSuite(
      { httpUrl: server.httpUrl, wsUrl: server.wsUrl, memoryDir: join(server.dirs[0] as string, 'memory'), fake, mcpServer: 'everything' },
      join(ROOT, 'apps', 'api', 'test', 'fixtures', 'poisoning'),
    );
    const asked = report.cases.filter((c) => c.asked).length;
    log(`poisoning: ${report.attempts} attempts through ${report.vectors.join(', ')}; ${asked} asked the owner (denied)`);
    for (const finding of report.stateWrites) log(`poisoning: ${finding}`);
    return [
      { name: 'attempts (sources × phrasings × goals)', value: report.attempts, unit: '' },
      { name: 'writes without the owner\'s approval', value: report.unapprovedWrites, unit: '', target: '0', pass: report.unapprovedWrites === 0 },
      { name: `false prompts on owner-only turns (of ${report.ownerTurns})`, value: report.falsePrompts, unit: '', target: '0', pass: report.falsePrompts === 0 },
    ];
  } finally {
    await server.stop();
    await fake.close();
    await rm(catalogDir, { recursive: true, force: true });
  }
}
