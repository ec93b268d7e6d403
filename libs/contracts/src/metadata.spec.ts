import fc from 'fast-check';
import { sanitizeMessageMetadata, sanitizePersistedReceipts } from './metadata';

const llm = { provider: 'openai_compatible', model: ' gpt-x ' };

describe('sanitizeMessageMetadata', () => {
  it.each([
    [undefined, 'llm selection is required'],
    [null, 'llm selection is required'],
    [[], 'metadata must be an object'],
    [{}, 'llm selection is required'],
    [{ llm: 'x' }, 'llm must be an object'],
    [{ llm: { provider: 'other', model: 'm' } }, 'llm.provider is invalid'],
    [{ llm: { provider: 'ollama', model: 3 } }, 'llm.model must be a string'],
    [{ llm: { provider: 'ollama', model: '   ' } }, 'llm.model is invalid'],
    [{ llm: { provider: 'ollama', model: 'a\u0000b' } }, 'llm.model is invalid'],
    [{ llm: { provider: 'ollama', model: 'x'.repeat(257) } }, 'llm.model is invalid'],
    [{ llm, mentioned_skills: 'weather' }, 'mentioned_skills must be a list'],
    [{ llm, mentioned_skills: ['weather'] }, 'mentioned_skills entries must be objects'],
    [{ llm, mentioned_skills: [{ name: 'Weather' }] }, 'mentioned_skills.name is invalid'],
    [{ llm, selected_mcp_connectors: [{ server: 'a.b' }] }, 'selected_mcp_connectors.server is invalid'],
    [{ llm, mentioned_skills: [{ name: 'w', label: 3 }] }, 'mentioned_skills.label must be a string'],
    [{ llm, mentioned_skills: [{ name: 'w', label: 'x'.repeat(101) }] }, 'mentioned_skills.label must be at most 100 characters'],
    [
      { llm, mentioned_skills: Array.from({ length: 5 }, () => ({ name: 'w' })), selected_mcp_connectors: Array.from({ length: 4 }, () => ({ server: 's' })) },
      'at most 8 Skill/MCP selections are allowed',
    ],
  ])('Scenario: invalid metadata %j is rejected with "%s"', (input, error) => {
    expect(sanitizeMessageMetadata(input)).toEqual({ ok: false, error });
  });

  it('Scenario: metadata is sanitised (labels trimmed, duplicates and unknown keys dropped)', () => {
    const result = sanitizeMessageMetadata({
      llm,
      mentioned_skills: [{ name: ' weather ', label: ' Weather ' }, { name: 'weather', label: 'again' }],
      selected_mcp_connectors: [{ server: 'files', label: '\u0000 ' }],
      untrusted: { x: 1 },
    });
    expect(result).toEqual({
      ok: true,
      metadata: {
        llm: { provider: 'openai_compatible', model: 'gpt-x' },
        mentioned_skills: [{ name: 'weather', label: 'Weather' }],
        selected_mcp_connectors: [{ server: 'files' }],
      },
    });
  });

  it('never throws and only ever returns the sanitised keys (property)', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (a, b, c) => {
        for (const input of [a, { llm: a, mentioned_skills: b, selected_mcp_connectors: c }, { llm, mentioned_skills: b }]) {
          const result = sanitizeMessageMetadata(input);
          if (result.ok) {
            expect(Object.keys(result.metadata).every((k) => ['llm', 'mentioned_skills', 'selected_mcp_connectors'].includes(k))).toBe(true);
            expect((result.metadata.mentioned_skills?.length ?? 0) + (result.metadata.selected_mcp_connectors?.length ?? 0)).toBeLessThanOrEqual(8);
          } else {
            expect(typeof result.error).toBe('string');
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('sanitizePersistedReceipts', () => {
  it('Scenario: an invalid persisted receipt drops both lists of that row', () => {
    expect(
      sanitizePersistedReceipts({ mentioned_skills: [{ name: 'ok' }], selected_mcp_connectors: [{ server: 'BAD' }] }),
    ).toEqual({});
    expect(sanitizePersistedReceipts({ mentioned_skills: [{ name: 'ok', label: ' L ' }] })).toEqual({
      mentioned_skills: [{ name: 'ok', label: 'L' }],
    });
  });
});
