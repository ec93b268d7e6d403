import { chatIdHash, normaliseRequestText, workflowFingerprint } from './fingerprint';

describe('workflowFingerprint', () => {
  it('Scenario: requests differing only in numbers, spacing and case share a fingerprint', () => {
    expect(workflowFingerprint('TWO-TOOLS please 123', ['read_file', 'grep'])).toBe(
      workflowFingerprint('TWO-TOOLS  please 456', ['grep', 'read_file']),
    );
  });

  it('Scenario: the fingerprint is 24 hex of sha256 over the normalised request and the sorted unique tools', () => {
    const fingerprint = workflowFingerprint('Hello', ['b', 'a', 'b']);
    expect(fingerprint).toMatch(/^[0-9a-f]{24}$/);
    expect(fingerprint).toBe(workflowFingerprint('hello', ['a', 'b']));
  });

  it('Scenario: a different tool set or a different request gives a different fingerprint', () => {
    const base = workflowFingerprint('summarise the log', ['read_file', 'grep']);
    expect(workflowFingerprint('summarise the log', ['read_file'])).not.toBe(base);
    expect(workflowFingerprint('summarise the logs', ['read_file', 'grep'])).not.toBe(base);
  });
});

describe('normaliseRequestText', () => {
  it('replaces standalone digit runs only', () => {
    expect(normaliseRequestText('Report 2024 for user42 and 7 items, v2 3.5')).toBe('report # for user42 and # items, v2 #.#');
  });

  it('collapses whitespace, trims and lower-cases (also non-ASCII)', () => {
    expect(normaliseRequestText('  ÄBC \n\t  Déf  ')).toBe('äbc déf');
    expect(normaliseRequestText('天气 ２０２４ 北京')).toBe('天气 # 北京');
  });

  it('keeps at most 500 code points', () => {
    const text = normaliseRequestText('😀'.repeat(600));
    expect(Array.from(text)).toHaveLength(500);
  });
});

describe('chatIdHash', () => {
  it('is the first 12 hex of sha256 of the chat id', () => {
    expect(chatIdHash('abc')).toBe('ba7816bf8f01');
  });
});
