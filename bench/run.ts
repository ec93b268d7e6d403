/**
 * `npm run bench`: runs every benchmark and writes bench/results/results.json and results.md.
 * Figures are medians over many iterations and reported against their targets; nothing here asserts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { runAutomationsBench } from './automations-bench';
import { runBackupBench } from './backup-bench';
import { runBrowserBench } from './browser-bench';
import { runChannelsBench } from './channels-bench';
import { runMcpBench } from './mcp-bench';
import { runMemoryBench } from './memory-bench';
import { runOpenAiBench } from './openai-bench';
import { runPoisoningBench } from './poisoning-bench';
import { runPrefixBench } from './prefix-bench';
import { runRestartBench } from './restart-bench';
import { runServerBench, type Figure } from './server-bench';
import { runSkillsBench } from './skills-bench';
import { runSubagentBench } from './subagent-bench';
import { runTextBench } from './text-bench';
import { runToolBench } from './tool-bench';
import { runUsageBench } from './usage-bench';

/** Each suite by name; `npm run bench -- server mcp` runs only those. */
const SUITES: Record<string, (log: (line: string) => void) => Promise<Figure[]>> = {
  tools: runToolBench,
  server: runServerBench,
  memory: runMemoryBench,
  mcp: runMcpBench,
  skills: runSkillsBench,
  text: runTextBench,
  openai: runOpenAiBench,
  prefix: runPrefixBench,
  usage: runUsageBench,
  restart: runRestartBench,
  backup: runBackupBench,
  browser: runBrowserBench,
  poisoning: runPoisoningBench,
  automations: runAutomationsBench,
  delegate: runSubagentBench,
  channels: runChannelsBench,
};

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const figures: Figure[] = [];
  const selected = process.argv.slice(2);
  for (const [name, run] of Object.entries(SUITES)) {
    if (selected.length > 0 && !selected.includes(name)) continue;
    log(`suite ${name}`);
    for (const figure of await run(log)) figures.push({ ...figure, name: `${name}: ${figure.name}` });
  }
  const resultsDir = join(__dirname, '..', '..', 'results');
  await mkdir(resultsDir, { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, cpus: cpus().length };
  await writeFile(join(resultsDir, 'results.json'), JSON.stringify({ meta, figures }, null, 2) + '\n');
  const rows = figures.map(
    (f) =>
      `| ${f.name} | ${Number.isInteger(f.value) ? f.value : f.value.toFixed(2)} ${f.unit} | ${f.target ?? ''} | ${
        f.pass === undefined ? '' : f.pass ? 'yes' : '**no**'
      } |`,
  );
  const table = ['| figure | value | target | met |', '|---|---|---|---|', ...rows].join('\n');
  await writeFile(join(resultsDir, 'results.md'), `# Benchmark results\n\n${JSON.stringify(meta)}\n\n${table}\n`);
  process.stdout.write(`${table}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
