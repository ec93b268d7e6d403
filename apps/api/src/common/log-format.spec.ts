import { formatEvent, formatLogLine, formatTimestamp } from './log-format';

describe('formatLogLine', () => {
  it('Scenario: a line has timestamp, padded level, logger, ids and message', () => {
    const date = new Date(2026, 0, 2, 3, 4, 5, 6);
    const line = formatLogLine({
      timestamp: date,
      level: 'INFO',
      logger: 'HttpAccess',
      context: { requestId: 'a'.repeat(32) },
      message: 'event=x',
    });
    expect(line).toMatch(
      /^2026-01-02 03:04:05\.006 [+-]\d{4} INFO {5}HttpAccess request_id=a{32} chat_id=- turn_id=- event=x$/,
    );
  });

  it('Scenario: the whole line is redacted', () => {
    const line = formatLogLine({
      timestamp: new Date(),
      level: 'WARNING',
      logger: 'X',
      context: { chatId: 'c1', turnId: 'f'.repeat(32) },
      message: 'call failed with api_key=abc and Bearer zzz',
    });
    expect(line).toContain('WARNING  X request_id=- chat_id=c1 turn_id=ffffffffffffffffffffffffffffffff');
    expect(line).toContain('api_key=[redacted]');
    expect(line).toContain('Bearer [redacted]');
    expect(line).not.toContain('zzz');
  });

  it('Scenario: the timestamp carries the local UTC offset', () => {
    expect(formatTimestamp(new Date())).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4}$/);
  });
});

describe('formatEvent', () => {
  it('Scenario: fields are sorted and typed', () => {
    expect(
      formatEvent('tool.execution.completed', { tool: 'list_dir', duration_ms: 3, ok: true, extra: null, none: undefined }),
    ).toBe('event=tool.execution.completed duration_ms=3 extra=- none=- ok=true tool="list_dir"');
  });

  it('Scenario: strings lose control characters and are capped at 500 chars', () => {
    expect(formatEvent('e', { s: 'a\nb\tc' })).toBe('event=e s="a b c"');
    const long = formatEvent('e', { s: '界'.repeat(600) });
    expect(long).toBe(`event=e s="${'界'.repeat(500)}"`);
  });
});
