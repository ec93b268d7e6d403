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

  it('Scenario: A fresh browser preselects the last model used on the server', () => {
    const lastUsed = { provider: 'ollama' as const, model: 'llama3' };
    // no preference in this browser: the server's last model, not the first alphabetically
    expect(reconcileSelection(null, models, lastUsed)).toEqual(lastUsed);
    // this browser's own choice wins
    expect(reconcileSelection({ provider: 'openai_compatible', model: 'gpt-a' }, models, lastUsed)).toEqual({
      provider: 'openai_compatible',
      model: 'gpt-a',
    });
    // a last model that is no longer listed falls back to the first
    expect(reconcileSelection(null, models, { provider: 'ollama', model: 'gone' })).toEqual({ provider: 'openai_compatible', model: 'gpt-a' });
  });

  it('ignores malformed stored preferences', () => {
    expect(parseStoredSelection('{"provider":"ollama","model":"x"}')).toEqual({ provider: 'ollama', model: 'x' });
    expect(parseStoredSelection('{"provider":"other","model":"x"}')).toBeNull();
    expect(parseStoredSelection('{"provider":"ollama","model":"  "}')).toBeNull();
    expect(parseStoredSelection('not json')).toBeNull();
    expect(parseStoredSelection(null)).toBeNull();
  });
});
