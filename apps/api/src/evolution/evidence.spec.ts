import type { TurnCompletedEvent } from '../events/app-events';
import { registerSecretValue, unregisterSecretValue } from '../common/redact';
import { buildEvidence, EVIDENCE_ID_PATTERN, evidenceSkipReason, parseEvidence, sanitiseEvidenceText } from './evidence';
import { workflowFingerprint } from './fingerprint';

function turn(overrides: Partial<TurnCompletedEvent> = {}): TurnCompletedEvent {
  return {
    chatId: 'chat-1',
    turnId: 'a'.repeat(32),
    provider: 'openai_compatible',
    model: 'fake-model',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    durationSec: 0.1,
    userContent: 'Summarise report 12',
    durable: [
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.md"}' } },
          { id: 'c2', type: 'function', function: { name: 'grep', arguments: '{"pattern":"x","token":"abc123"}' } },
        ],
      },
      { role: 'tool', content: 'file text', tool_call_id: 'c1', name: 'read_file' },
      { role: 'tool', content: '[Skill loaded: weather@v1 sha256:' + 'f'.repeat(64) + ']', tool_call_id: 'c2', name: 'grep' },
    ],
    answer: 'Done.',
    toolCalls: 2,
    failedToolCalls: 0,
    iterationLimitReached: false,
    ...overrides,
  };
}

const rules = { enabled: true, minToolCalls: 2 };

describe('evidenceSkipReason', () => {
  it('Scenario: a successful turn with enough tool calls is evidence', () => {
    expect(evidenceSkipReason(turn(), rules)).toBeNull();
  });

  it('Scenario: nothing is collected while evolution is disabled', () => {
    expect(evidenceSkipReason(turn(), { ...rules, enabled: false })).toBe('disabled');
  });

  it('Scenario: a turn with a failed tool call is not evidence', () => {
    expect(evidenceSkipReason(turn({ failedToolCalls: 1 }), rules)).toBe('failed_tool_call');
  });

  it('Scenario: a turn that hit the iteration limit is not evidence', () => {
    expect(evidenceSkipReason(turn({ iterationLimitReached: true }), rules)).toBe('iteration_limit_reached');
  });

  it('Scenario: a turn the runaway guard stopped is not evidence', () => {
    expect(evidenceSkipReason(turn({ runawayStopped: true }), rules)).toBe('runaway_stopped');
    expect(evidenceSkipReason(turn({ runawayStopped: false }), rules)).toBeNull();
  });

  it('Scenario: a turn with fewer tool calls than the minimum is not evidence', () => {
    expect(evidenceSkipReason(turn({ toolCalls: 1 }), rules)).toBe('insufficient_tool_calls');
    expect(evidenceSkipReason(turn({ toolCalls: 1 }), { ...rules, minToolCalls: 1 })).toBeNull();
  });
});

describe('sanitiseEvidenceText', () => {
  it('Scenario: secrets are redacted by pattern and by registered value before truncation', () => {
    registerSecretValue('very-secret-value-42');
    try {
      const text = sanitiseEvidenceText(
        'token=abc123 password: hunter2; key sk-abcdefghijklmnop and very-secret-value-42 Bearer xyz.abc',
        1000,
      );
      expect(text).not.toMatch(/abc123|hunter2|abcdefghijklmnop|very-secret-value-42|xyz\.abc/);
      expect(text).toContain('token=[REDACTED]');
      expect(text).toContain('password=[REDACTED]');
    } finally {
      unregisterSecretValue('very-secret-value-42');
    }
  });

  it('replaces Skill receipts and truncates to the limit', () => {
    expect(sanitiseEvidenceText('[Skill loaded: weather@v1 sha256:abc] ok', 100)).toBe('[Skill loaded receipt] ok');
    const cut = sanitiseEvidenceText('x'.repeat(50), 10);
    expect(Array.from(cut)).toHaveLength(10);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('buildEvidence', () => {
  it('Scenario: the evidence record keeps tools as called, redacted receipts and a chat id hash only', () => {
    const now = new Date('2026-07-26T04:00:00.000Z');
    const record = buildEvidence(turn(), now);
    expect(record.id).toMatch(EVIDENCE_ID_PATTERN);
    expect(record.id.startsWith(String(now.getTime()))).toBe(true);
    expect(record.fingerprint).toBe(workflowFingerprint('Summarise report 12', ['read_file', 'grep']));
    expect(record.chat_id_hash).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(record)).not.toContain('chat-1');
    expect(record.tools).toEqual(['read_file', 'grep']);
    expect(record.tool_calls[1]).toEqual({ name: 'grep', arguments: '{"pattern":"x","token":"[REDACTED]"}' });
    expect(record.tool_receipts).toEqual(['file text', '[Skill loaded receipt]']);
    expect(record.created_at).toBe('2026-07-26T04:00:00.000Z');
    expect(parseEvidence(JSON.parse(JSON.stringify(record)))).toEqual(record);
  });

  it('bounds the user text and the answer', () => {
    const record = buildEvidence(turn({ userContent: 'u'.repeat(5000), answer: 'a'.repeat(5000) }), new Date());
    expect(record.user.length).toBe(2000);
    expect(record.assistant.length).toBe(2500);
  });
});
