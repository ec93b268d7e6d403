import { parseScope, sameScope } from './tool-policy-store';

describe('tool policy store: rule scopes', () => {
  it('Scenario: exact command rules are validated when read from disk', () => {
    expect(parseScope({ kind: 'exec_command', argv: ['git', 'status'] })).toEqual({ kind: 'exec_command', argv: ['git', 'status'] });
    expect(parseScope({ kind: 'exec_command', argv: ['git', 'commit', '-m', "a 'b'\tc"] })).not.toBeNull();
    for (const argv of [[], 'git status', ['./x'], ['/usr/bin/git'], ['git', 1], ['git', 'a\nb'], ['git', 'a\0b'], ['-x'], new Array(257).fill('a'), ['git', 'x'.repeat(16_385)]]) {
      expect(parseScope({ kind: 'exec_command', argv })).toBeNull();
    }
    expect(parseScope({ kind: 'exec_command' })).toBeNull();
    expect(sameScope({ kind: 'exec_command', argv: ['git', 'status'] }, { kind: 'exec_command', argv: ['git', 'status'] })).toBe(true);
    expect(sameScope({ kind: 'exec_command', argv: ['git', 'status'] }, { kind: 'exec_command', argv: ['git', 'status', '-s'] })).toBe(false);
    expect(sameScope({ kind: 'exec_command', argv: ['git'] }, { kind: 'exec_program', program: 'git' })).toBe(false);
  });
});
