import { describeAllowedTools, prefixRunsAnyCode } from './skill-pre-approval-summary';

describe('Skill pre-approval summary', () => {
  it('describes each allowed-tools entry as the pre-approvals parser reads it', () => {
    const items = describeAllowedTools(['Bash', 'Bash(git status:*)', 'Bash(npm test)', 'Read', 'mcp__files', 'mcp__files__read', 'Read(./src/**)', 'Bash(git:*)']);
    expect(items.map((item) => [item.kind, item.value, item.broad])).toEqual([
      ['any_command', '', true],
      ['command_prefix', 'git status', false],
      ['exact_command', 'npm test', false],
      ['tool', 'read_file', false],
      ['mcp_server', 'files', false],
      ['mcp_tool', 'read', false],
      ['ignored', '', false],
      ['command_prefix', 'git', true],
    ]);
    expect(items[0]?.text).toBe('any shell command');
    expect(items[1]?.text).toBe('commands starting with `git status`');
    expect(items[4]?.text).toBe('every tool of MCP server files');
    expect(items[7]?.text).toContain('effectively any shell command');
  });

  it('a prefix that is only a program running other code, or a shell with an option, is any command', () => {
    expect(prefixRunsAnyCode(['python3'])).toBe(true);
    expect(prefixRunsAnyCode(['/usr/bin/find'])).toBe(true);
    expect(prefixRunsAnyCode(['sh', '-c'])).toBe(true);
    expect(prefixRunsAnyCode(['sh', 'scripts/setup.sh'])).toBe(false);
    expect(prefixRunsAnyCode(['git', 'status'])).toBe(false);
    expect(prefixRunsAnyCode(['ls'])).toBe(false);
  });
});
