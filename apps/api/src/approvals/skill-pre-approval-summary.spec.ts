import { describeAllowedTools } from './skill-pre-approval-summary';

describe('Skill pre-approval summary', () => {
  it('describes each allowed-tools entry as the pre-approvals parser reads it', () => {
    const items = describeAllowedTools(['Bash', 'Bash(ls -la:*)', 'Bash(npm test)', 'Read', 'mcp__files', 'mcp__files__read', 'Read(./src/**)', 'Bash(git:*)']);
    expect(items.map((item) => [item.kind, item.value, item.broad])).toEqual([
      ['any_command', '', true],
      ['command_prefix', 'ls -la', false],
      ['exact_command', 'npm test', false],
      ['tool', 'read_file', false],
      ['mcp_server', 'files', false],
      ['mcp_tool', 'read', false],
      ['ignored', '', false],
      ['command_prefix', 'git', true],
    ]);
    expect(items[0]?.text).toBe('any shell command');
    expect(items[1]?.text).toBe('commands starting with `ls -la`');
    expect(items[4]?.text).toBe('every tool of MCP server files');
    expect(items[7]?.text).toContain('effectively any shell command');
  });

  it('a prefix of a program that can run other code through its arguments is any command; exact commands are not', () => {
    const broad = (entry: string) => describeAllowedTools([entry])[0]?.broad;
    expect(broad('Bash(python3:*)')).toBe(true);
    expect(broad('Bash(/usr/bin/find:*)')).toBe(true);
    expect(broad('Bash(git status:*)')).toBe(true);
    expect(broad('Bash(npm run:*)')).toBe(true);
    expect(broad('Bash(cat:*)')).toBe(false);
    expect(broad('Bash(git status)')).toBe(false);
    // a shell or launcher is never pre-approved, and said so
    expect(describeAllowedTools(['Bash(sh -c:*)'])[0]).toMatchObject({ kind: 'ignored', text: 'nothing (this entry is not pre-approved)' });
  });
});
