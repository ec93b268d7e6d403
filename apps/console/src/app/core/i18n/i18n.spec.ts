import { TestBed } from '@angular/core/testing';

import { I18n, LANGUAGE_STORAGE_KEY, interpolate } from './i18n';
import { EN_MESSAGES } from './messages.en';
import { ZH_CN_MESSAGES } from './messages.zh-cn';

describe('I18n', () => {
  beforeEach(() => localStorage.clear());

  it('Scenario: English is the default and Simplified Chinese is one switch away (remembered)', () => {
    const i18n = TestBed.inject(I18n);
    expect(i18n.t('nav.newChat')).toBe('New chat');
    i18n.setLanguage('zh-CN');
    expect(i18n.t('nav.newChat')).toBe('新建对话');
    expect(document.documentElement.lang).toBe('zh-CN');
    expect(localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe('zh-CN');
    TestBed.resetTestingModule();
    expect(TestBed.inject(I18n).lang()).toBe('zh-CN');
  });

  it('Scenario: English and Simplified Chinese have exactly the same keys', () => {
    const en = Object.keys(EN_MESSAGES).sort();
    const zh = Object.keys(ZH_CN_MESSAGES).sort();
    expect(zh.filter((key) => !en.includes(key))).toEqual([]);
    expect(en.filter((key) => !zh.includes(key))).toEqual([]);
    expect(zh).toEqual(en);
  });

  it('Scenario: feature strings are namespaced keys of the one dictionary', () => {
    const i18n = TestBed.inject(I18n);
    expect(i18n.t('toolPolicies.title')).toBe('Tools & approvals');
    expect(i18n.t('mcp.status.connected')).toBe('Connected');
    expect(i18n.t('skills.upload.done', { name: 'pdf' })).toContain('pdf');
    i18n.setLanguage('zh-CN');
    expect(i18n.t('toolPolicies.title')).toBe('工具与审批');
    expect(i18n.t('evolution.title')).toBe('技能进化');
  });

  it('both dictionaries translate every key with the same placeholders', () => {
    for (const key of Object.keys(EN_MESSAGES) as (keyof typeof EN_MESSAGES)[]) {
      expect(ZH_CN_MESSAGES[key].trim()).not.toBe('');
      const placeholders = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
      expect(placeholders(ZH_CN_MESSAGES[key])).toEqual(placeholders(EN_MESSAGES[key]));
    }
  });

  it('interpolates named placeholders', () => {
    expect(interpolate('{n} min ago', { n: 5 })).toBe('5 min ago');
    expect(interpolate('{missing} stays', {})).toBe('{missing} stays');
  });
});
