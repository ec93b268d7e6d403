import { TestBed } from '@angular/core/testing';

import { I18n } from '../i18n/i18n';
import { problemMessageKey } from './problem-messages';

describe('problemMessageKey', () => {
  beforeEach(() => localStorage.clear());

  it('Scenario: known codes map to messages in both languages; unknown codes map to nothing', () => {
    const i18n = TestBed.inject(I18n);
    const key = problemMessageKey('dream_running');
    expect(key).toBe('problem.dream_running');
    expect(i18n.t(key!)).toBe('A Dream run is already in progress');
    i18n.setLanguage('zh-CN');
    expect(i18n.t(key!)).toBe('已有一次 Dream 运行正在进行');
    expect(problemMessageKey('conflict')).toBeUndefined();
    expect(problemMessageKey('toString')).toBeUndefined();
  });
});
