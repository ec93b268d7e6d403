import { formatDuration, prettyArguments, summarizeArguments } from './tool-format';

describe('tool format', () => {
  it('summarises JSON arguments as key: value pairs', () => {
    expect(summarizeArguments('{"path":"notes/today.md","limit":20,"recursive":true}')).toBe(
      'path: "notes/today.md", limit: 20, recursive: true',
    );
    expect(summarizeArguments('{}')).toBe('');
    expect(summarizeArguments('')).toBe('');
  });

  it('truncates long summaries and shows non-JSON text as is', () => {
    const summary = summarizeArguments(JSON.stringify({ command: 'x'.repeat(300) }), 50);
    expect(Array.from(summary)).toHaveLength(50);
    expect(summary.endsWith('…')).toBe(true);
    expect(summarizeArguments('{"path": "abc… (truncated)')).toBe('{"path": "abc… (truncated)');
  });

  it('pretty-prints arguments for the expanded view', () => {
    expect(prettyArguments('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyArguments('oops')).toBe('oops');
  });

  it('formats durations', () => {
    expect(formatDuration(320)).toBe('320 ms');
    expect(formatDuration(1450)).toBe('1.4 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});
