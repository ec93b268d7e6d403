/**
 * Text passes on adversarial input: for each pass that meets text from outside (redaction, the tool-argument
 * preview, the web_fetch text tidy and HTML conversion, the SKILL.md parser, the MCP validators), the worst time per
 * MiB over the adversarial families (best of 3 runs each, so that a scheduler hiccup is not mistaken for the pass).
 */
import { FRONTMATTER_MAX_BYTES, parseSkillMarkdown } from '../libs/skill-format/src';
import { argumentPreview } from '../apps/api/src/agent/argument-preview';
import { htmlToMarkdown, tidyText } from '../apps/api/src/agent/tools/html-to-markdown';
import { redactSecrets, registerSecretValue } from '../apps/api/src/common/redact';
import { validateHeaders, validateUrl } from '../apps/api/src/mcp/mcp-validation';
import type { Figure } from './server-bench';

const MiB = 1024 * 1024;
const TARGET_MS_PER_MIB = 50;

function fill(unit: string, size = MiB): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

const FAMILIES: Record<string, string> = {
  'secret×N': fill('secret'),
  'api_key=×N': fill('api_key='),
  'key-name run': fill('x-api-key-secret-password'),
  'Bearer ×N': fill('Bearer '),
  'unclosed quotes': fill('password="\\'),
  'quoted keys': fill('"secret":"'),
  'single quotes': fill("'secret'='"),
  'key then spaces': `password:${fill(' ')}`,
  'spaces': `${fill(' ')}x`,
  'tabs and spaces': `${fill(' \t')}x`,
  'newlines': `${fill('\n')}x`,
  'CRLF': fill('\r\n'),
  'nested brackets': `${fill('[', MiB / 2)}${fill(']', MiB / 2)}`,
  'sk- runs': fill('sk-'),
  'plain prose': fill('The quick brown fox jumps over the lazy dog. '),
};

const HTML_FAMILIES: Record<string, string> = {
  'nbsp run': `<p>a${fill('&nbsp;')}b</p>`,
  '<br> run': `<p>a${fill('<br>')}b</p>`,
  'pre spaces': `<pre>a${fill(' ')}b</pre>`,
  'unclosed tags': fill('<a href="x'),
  'paragraphs': fill('<p>The quick <b>brown</b> fox <a href="/x">jumps</a>.</p>\n'),
};

function bestMs(run: () => unknown, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

async function bestMsAsync(run: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await run().catch(() => undefined);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

function worst(name: string, log: (line: string) => void, perFamily: Array<[string, number]>): Figure {
  perFamily.sort((a, b) => b[1] - a[1]);
  const [family, value] = perFamily[0]!;
  log(`${name}: worst ${value.toFixed(1)} ms/MiB (${family}); ${perFamily.map(([f, v]) => `${f} ${v.toFixed(1)}`).join(', ')}`);
  return { name: `${name}, worst adversarial (${family})`, value, unit: 'ms/MiB', target: `≤ ${TARGET_MS_PER_MIB} ms/MiB`, pass: value <= TARGET_MS_PER_MIB };
}

export async function runTextBench(log: (line: string) => void): Promise<Figure[]> {
  registerSecretValue('bench-registered-secret-value');
  registerSecretValue('sk-bench-model-key-0123456789');
  const figures: Figure[] = [];
  const perMiB = (text: string, ms: number) => ms / (text.length / MiB);
  const each = (pass: (text: string) => unknown): Array<[string, number]> =>
    Object.entries(FAMILIES).map(([family, text]) => [family, perMiB(text, bestMs(() => pass(text)))]);

  figures.push(worst('redaction (log lines, exec output, MCP results)', log, each(redactSecrets)));
  figures.push(worst('tool-argument preview', log, each((text) => argumentPreview(JSON.stringify({ command: text })))));
  figures.push(worst('web_fetch text tidy', log, each(tidyText)));
  figures.push(
    worst('MCP url and header validation', log, each((text) => {
      for (const run of [() => validateUrl(`https://example.com/${text}`), () => validateHeaders({ 'X-Key': text }, null)]) {
        try {
          run();
        } catch {
          // a validation error is the expected answer
        }
      }
    })),
  );
  // a SKILL.md frontmatter is refused above 16,384 bytes, deeper than 16 flow levels or with more than 64 blank
  // lines in a row, before YAML sees it: the figure is the largest frontmatter that is checked (and parsed when it
  // passes), per MiB. A parse takes about a millisecond, so that one scheduler pause is not read as 64 times its
  // length per MiB, the parser is warmed up first and each family is the best of 20 runs
  parseSkillMarkdown(`---\nname: bench\ndescription: ${FAMILIES['plain prose']!.slice(0, FRONTMATTER_MAX_BYTES - 40)}\n---\nbody\n`);
  figures.push(
    worst('SKILL.md parse (16 kB frontmatter cap)', log, Object.entries(FAMILIES).map(([family, text]) => {
      const skill = `---\nname: bench\ndescription: ${text.slice(0, FRONTMATTER_MAX_BYTES - 40)}\n---\nbody\n`;
      return [family, perMiB(skill, bestMs(() => parseSkillMarkdown(skill), 20))];
    })),
  );
  const html: Array<[string, number]> = [];
  for (const [family, text] of Object.entries(HTML_FAMILIES)) {
    html.push([family, perMiB(text, await bestMsAsync(() => htmlToMarkdown(text, 'https://example.com/', { timeoutMs: 5000 })))]);
  }
  const htmlFigure = worst('web_fetch HTML → Markdown (worker, 5 s budget)', log, html);
  htmlFigure.note = 'off the main thread: turndown and its parser are not linear, the worker is stopped at the budget';
  figures.push(htmlFigure);
  return figures;
}
