import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { parseSkillMarkdown } from '@cashcode/skill-format';
import type { LoadedPackage } from './skill-package-reader';
import { SkillStore } from './skill-store';

const BUILTIN_DIR = join(__dirname, 'builtin');

describe('built-in Skills', () => {
  const store = new SkillStore({ builtin: BUILTIN_DIR, user: '/nonexistent/user', agent: '/nonexistent/agent', snapshots: '/nonexistent/snap' });

  async function load(name: string): Promise<LoadedPackage> {
    const result = await store.readPackage('builtin', name);
    if (!result.ok) throw new Error(`${name}: ${result.error}`);
    return result.pkg;
  }

  it('Scenario: exactly the four shipped built-in Skills exist and all validate', async () => {
    expect((await store.listDirectories('builtin')).sort()).toEqual(['chart-visualization', 'github', 'skill-creator', 'weather']);
    for (const name of ['chart-visualization', 'github', 'skill-creator', 'weather']) {
      const pkg = await load(name);
      expect(pkg.manifest.name).toBe(name);
      expect(pkg.manifest.description.length).toBeGreaterThan(40);
    }
  });

  it('Scenario: the built-ins declare their dependencies', async () => {
    const chart = await load('chart-visualization');
    expect(chart.manifest.requires.tools).toEqual(['write_file']);
    expect(chart.manifest.optional.tools).toEqual(['read_file']);
    expect(chart.manifest.tags).toEqual(expect.arrayContaining(['chart', 'visualization', 'echarts', 'dashboard']));
    expect(chart.files).toEqual(['references/echarts.md', 'templates/chart.html']);
    const github = await load('github');
    expect(github.manifest.requires).toMatchObject({ tools: ['exec'], bins: ['gh'] });
    expect((await load('skill-creator')).manifest.requires.tools).toEqual(['agent_skill_manage']);
    const weather = await load('weather');
    expect(weather.manifest.requires.tools).toEqual(['web_fetch']);
    expect(weather.manifest.optional.tools).toEqual(['web_search']);
    expect(weather.body).toContain('format=j1');
    expect(weather.body).toContain('open-meteo.com');
  });

  it('Scenario: the localized example in skill-creator validates as its own Skill', async () => {
    const text = await fs.readFile(join(BUILTIN_DIR, 'skill-creator', 'SKILL.md'), 'utf8');
    const example = /```markdown\n([\s\S]*?)\n```/.exec(text)?.[1];
    expect(example).toBeDefined();
    const parsed = parseSkillMarkdown(`${example}\n`, { expectedName: 'renzhi-niuqu' });
    expect(parsed.ok && parsed.manifest.display_name).toBe('认知扭曲');
  });

  it('Scenario: the chart template has the placeholders the Skill body names', async () => {
    const template = await fs.readFile(join(BUILTIN_DIR, 'chart-visualization', 'templates', 'chart.html'), 'utf8');
    expect(template).toContain('{{TITLE}}');
    expect(template).toContain('{{OPTION_JSON}}');
  });
});
