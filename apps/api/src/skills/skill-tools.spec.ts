import { pythonJson } from './python-json';
import { explicitSkillSelection } from './skill-selection';

describe('skill tool helpers', () => {
  it("Scenario: pythonJson uses Python's json.dumps spacing and ensure_ascii escaping", () => {
    const value = { error: 'missing_dependency', name: 'github', missing: ['bin:gh'], ok: true, n: 1.5, none: null };
    expect(pythonJson(value)).toBe('{"error": "missing_dependency", "name": "github", "missing": ["bin:gh"], "ok": true, "n": 1.5, "none": null}');
    expect(pythonJson({ display_name: '认知扭曲' })).toBe('{"display_name": "认知扭曲"}');
    expect(pythonJson({ display_name: '认知😀' }, true)).toBe('{"display_name": "\\u8ba4\\u77e5\\ud83d\\ude00"}');
    expect(pythonJson([])).toBe('[]');
  });

  it('Scenario: explicit selections merge mentioned_skills and a legacy leading @name, de-duplicated in order', () => {
    expect(explicitSkillSelection('@weather  in Paris', [{ name: 'github' }, { name: 'weather' }])).toEqual({
      names: ['github', 'weather'],
      taskText: 'in Paris',
      legacyName: 'weather',
    });
    expect(explicitSkillSelection('@weather', undefined)).toEqual({ names: ['weather'], taskText: '', legacyName: 'weather' });
    expect(explicitSkillSelection('mail me@example.com', undefined)).toEqual({ names: [], taskText: 'mail me@example.com', legacyName: null });
    expect(explicitSkillSelection(' @weather x', undefined)).toEqual({ names: [], taskText: ' @weather x', legacyName: null });
    expect(explicitSkillSelection('@Weather x', undefined).names).toEqual([]);
  });
});
