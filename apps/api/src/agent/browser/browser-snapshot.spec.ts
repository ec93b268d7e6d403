import { isRef, parseSnapshotLine } from './browser-snapshot';

describe('snapshot lines', () => {
  it('reads role, name and ref', () => {
    expect(parseSnapshotLine('  - button "Send" [ref=e5]')).toEqual({ role: 'button', name: 'Send', ref: 'e5' });
    expect(parseSnapshotLine('- link "Say \\"hi\\"" [ref=f1e12] [cursor=pointer]:')).toEqual({ role: 'link', name: 'Say "hi"', ref: 'f1e12' });
    expect(parseSnapshotLine('    - textbox [ref=e4]: v0')).toEqual({ role: 'textbox', name: null, ref: 'e4' });
  });

  it('Scenario: snapshot lines are read without trusting their text', () => {
    expect(parseSnapshotLine('- text: hello')).toBeNull();
    expect(parseSnapshotLine('- paragraph: see [ref=x1] here')).toBeNull();
    expect(parseSnapshotLine('[ref=e1]')).toBeNull();
  });

  it('accepts only ref shapes', () => {
    expect(isRef('e1')).toBe(true);
    expect(isRef('f2e30')).toBe(true);
    expect(isRef('e')).toBe(false);
    expect(isRef('e1 >> css=a')).toBe(false);
  });
});
