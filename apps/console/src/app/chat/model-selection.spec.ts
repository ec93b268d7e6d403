import { groupModels, parseStoredSelection, reconcileSelection } from './model-selection';

const models = [
  { provider: 'ollama' as const, id: 'llama3' },
  { provider: 'openai_compatible' as const, id: 'gpt-a' },
  { provider: 'openai_compatible' as const, id: 'gpt-b' },
];

describe('model selection', () => {
  it('groups models by provider, OpenAI-compatible first', () => {
    expect(groupModels(models)).toEqual([
      { provider: 'openai_compatible', models: ['gpt-a', 'gpt-b'] },
      { provider: 'ollama', models: ['llama3'] },
    ]);
  });

  it('Scenario: the remembered model is kept while listed, else the first model', () => {
    expect(reconcileSelection({ provider: 'ollama', model: 'llama3' }, models)).toEqual({ provider: 'ollama', model: 'llama3' });
    expect(reconcileSelection({ provider: 'ollama', model: 'gpt-a' }, models)).toEqual({ provider: 'openai_compatible', model: 'gpt-a' });
    expect(reconcileSelection(null, [])).toBeNull();
  });

  it('ignores malformed stored preferences', () => {
    expect(parseStoredSelection('{"provider":"ollama","model":"x"}')).toEqual({ provider: 'ollama', model: 'x' });
    expect(parseStoredSelection('{"provider":"other","model":"x"}')).toBeNull();
    expect(parseStoredSelection('{"provider":"ollama","model":"  "}')).toBeNull();
    expect(parseStoredSelection('not json')).toBeNull();
    expect(parseStoredSelection(null)).toBeNull();
  });
});
