import { loadConfig } from '../config/app-config';

const ROOT = '/srv/cashcode';

describe('SKILL_EVOLUTION_* settings', () => {
  it('Scenario: skill evolution is off by default with the reference defaults', () => {
    const config = loadConfig({}, ROOT);
    expect(config).toMatchObject({
      skillEvolutionEnabled: false,
      skillEvolutionMinToolCalls: 2,
      skillEvolutionRecurrence: 2,
      skillEvolutionMaxContextChars: 12_000,
      skillEvolutionMaxConcurrent: 1,
      skillEvolutionMaxEvidence: 500,
      skillEvolutionDir: '/srv/cashcode/data/skill-evolution',
    });
  });

  it.each(['1', 'true', 'TRUE', 'yes', ' Yes '])('Scenario: SKILL_EVOLUTION_ENABLED=%p enables it', (value) => {
    expect(loadConfig({ SKILL_EVOLUTION_ENABLED: value }, ROOT).skillEvolutionEnabled).toBe(true);
  });

  it.each(['0', 'false', 'no', 'maybe', ''])('SKILL_EVOLUTION_ENABLED=%p leaves it off', (value) => {
    expect(loadConfig({ SKILL_EVOLUTION_ENABLED: value }, ROOT).skillEvolutionEnabled).toBe(false);
  });

  it('raises values below their minimum to the minimum', () => {
    const config = loadConfig(
      {
        SKILL_EVOLUTION_MIN_TOOL_CALLS: '0',
        SKILL_EVOLUTION_RECURRENCE: '1',
        SKILL_EVOLUTION_MAX_CONTEXT_CHARS: '10',
        SKILL_EVOLUTION_MAX_CONCURRENT: '-3',
        SKILL_EVOLUTION_MAX_EVIDENCE: '2',
      },
      ROOT,
    );
    expect(config).toMatchObject({
      skillEvolutionMinToolCalls: 1,
      skillEvolutionRecurrence: 2,
      skillEvolutionMaxContextChars: 1000,
      skillEvolutionMaxConcurrent: 1,
      skillEvolutionMaxEvidence: 10,
    });
  });

  it('rejects a non-integer value with a readable message', () => {
    expect(() => loadConfig({ SKILL_EVOLUTION_RECURRENCE: 'often' }, ROOT)).toThrow(
      'SKILL_EVOLUTION_RECURRENCE must be an integer, got "often"',
    );
  });
});
