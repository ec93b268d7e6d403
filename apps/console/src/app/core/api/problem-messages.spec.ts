import { TestBed } from '@angular/core/testing';
import { PROBLEM_REASONS, SERVER_ERROR_CODES } from '@cashcode/contracts';

import { I18n } from '../i18n/i18n';
import { EN_MESSAGES } from '../i18n/messages.en';
import { ZH_CN_MESSAGES } from '../i18n/messages.zh-cn';
import { localizeProblem, problemMessageKey } from './problem-messages';

describe('problemMessageKey', () => {
  beforeEach(() => localStorage.clear());
  afterEach(() => localStorage.clear());

  it('Scenario: known codes map to messages in both languages; unknown codes map to nothing', () => {
    const i18n = TestBed.inject(I18n);
    const key = problemMessageKey('dream_running');
    expect(key).toBe('problem.dream_running');
    expect(i18n.t(key!)).toBe('A Dream run is already in progress');
    i18n.setLanguage('zh-CN');
    expect(i18n.t(key!)).toBe('已有一次 Dream 运行正在进行');
    expect(problemMessageKey('no_such_code')).toBeUndefined();
    expect(problemMessageKey('toString')).toBeUndefined();
  });

  it('Scenario: every error code the server can send has a message in both languages', () => {
    const en = EN_MESSAGES as Record<string, string>;
    const zh = ZH_CN_MESSAGES as Record<string, string>;
    const untranslated = SERVER_ERROR_CODES.filter((code) => {
      const key = problemMessageKey(code);
      return key === undefined || !en[key]?.trim() || !zh[key]?.trim();
    });
    expect(untranslated).toEqual([]);
    // no Chinese message of a server code is the English text
    expect(SERVER_ERROR_CODES.filter((code) => zh[`problem.${code}`] === en[`problem.${code}`])).toEqual([]);
  });

  it('Scenario: a server error whose code covers several situations keeps the server detail in the translation', () => {
    const i18n = TestBed.inject(I18n);
    const problem = { code: 'validation', detail: 'name must match ^[a-z]+$' };
    expect(localizeProblem(i18n, 'validation', problem)).toBe('name must match ^[a-z]+$');
    i18n.setLanguage('zh-CN');
    expect(localizeProblem(i18n, 'validation', problem)).toBe('输入无效：name must match ^[a-z]+$');
    expect(localizeProblem(i18n, 'queue_full', { detail: 'Too many messages (at most 16)' })).toBe(
      '此对话等待中的消息过多，请等待当前回答完成。',
    );
    // a detail-based message without a detail, or an unknown code: the caller shows the server's own text
    expect(localizeProblem(i18n, 'validation', { code: 'validation' })).toBeUndefined();
    expect(localizeProblem(i18n, 'no_such_code', { detail: 'x' })).toBeUndefined();
  });

  it('Scenario: every finer reason of a problem has a message in both languages', () => {
    const en = EN_MESSAGES as Record<string, string>;
    const zh = ZH_CN_MESSAGES as Record<string, string>;
    const keys = Object.entries(PROBLEM_REASONS).flatMap(([code, reasons]) => reasons.map((reason) => `problem.${code}.${reason}`));
    expect(keys.filter((key) => !en[key]?.trim() || !zh[key]?.trim() || en[key] === zh[key])).toEqual([]);
  });

  it('Scenario: a refused ZIP import reads in the console language with its member and limit', () => {
    const i18n = TestBed.inject(I18n);
    i18n.setLanguage('zh-CN');
    const symlink = { code: 'skill_validation', reason: 'archive_symlink', member: 'scripts/link', detail: 'archive contains a symlink or special file: scripts/link' };
    expect(localizeProblem(i18n, 'skill_validation', symlink)).toBe('压缩包包含符号链接或特殊文件：scripts/link');
    const many = { code: 'skill_validation', reason: 'archive_too_many_entries', limit: 4096, detail: 'archive contains too many entries: 5,000' };
    expect(localizeProblem(i18n, 'skill_validation', many)).toBe('压缩包中的条目过多（上限为 4096）');
    expect(localizeProblem(i18n, 'connection_failed', { reason: 'auth', detail: 'Authentication failed: check the API key.' })).toBe(
      '身份验证失败：请检查 API 密钥。',
    );
    // an unknown reason falls back to the code's message; a reason message missing its member shows the server's detail
    expect(localizeProblem(i18n, 'skill_validation', { reason: 'new_rule', detail: 'x is wrong' })).toBe('Skill 无效：x is wrong');
    expect(localizeProblem(i18n, 'skill_validation', { reason: 'archive_symlink', detail: 'x' })).toBeUndefined();
  });
});
