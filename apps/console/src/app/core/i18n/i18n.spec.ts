import { TestBed } from '@angular/core/testing';

import { I18n, LANGUAGE_STORAGE_KEY, interpolate } from './i18n';
import { EN_MESSAGES } from './messages.en';
import { ZH_CN_MESSAGES } from './messages.zh-cn';

describe('I18n', () => {
  beforeEach(() => localStorage.clear());
  afterEach(() => localStorage.clear());

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
    expect(i18n.t('evolution.title')).toBe('Skill 进化');
  });

  it('both dictionaries translate every key with the same placeholders', () => {
    for (const key of Object.keys(EN_MESSAGES) as (keyof typeof EN_MESSAGES)[]) {
      expect(ZH_CN_MESSAGES[key].trim()).not.toBe('');
      const placeholders = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
      expect(placeholders(ZH_CN_MESSAGES[key])).toEqual(placeholders(EN_MESSAGES[key]));
    }
  });

  it('Scenario: every English message has a real Simplified Chinese translation', () => {
    // brand names, protocol names and pure placeholders read the same in both languages
    const sameInBoth = new Set([
      'app.name',
      'risk.mcp',
      'picker.mcp',
      'picker.skill',
      'provider.ollama',
      'provider.anthropic',
      'mcp.actionFailed',
      'mcp.form.type.sse',
      'mcp.form.type.streamable_http',
      'skills.editor.subtitle',
      'skills.upload.size',
    ]);
    const en = EN_MESSAGES as Record<string, string>;
    const zh = ZH_CN_MESSAGES as Record<string, string>;
    expect(Object.keys(en).filter((key) => en[key] === zh[key] && !sameInBoth.has(key))).toEqual([]);
  });

  it('Scenario: Simplified Chinese names Skills consistently', () => {
    const zh = Object.values(ZH_CN_MESSAGES).join('\n');
    expect(zh).not.toContain('技能');
    const i18n = TestBed.inject(I18n);
    i18n.setLanguage('zh-CN');
    expect(i18n.t('nav.skillMarket')).toBe('Skill 市场');
    expect(i18n.t('nav.evolution')).toBe('Skill 进化');
  });

  it('Scenario: count-bearing messages use the plural forms of the language', () => {
    const i18n = TestBed.inject(I18n);
    expect(i18n.t('mcp.toolCount', { count: 1 })).toBe('1 tool');
    expect(i18n.t('mcp.toolCount', { count: 2 })).toBe('2 tools');
    expect(i18n.t('mcp.toolCount', { count: 0 })).toBe('0 tools');
    expect(i18n.t('settings.testSucceeded', { count: 1 })).toBe('Connected: found 1 model');
    i18n.setLanguage('zh-CN');
    expect(i18n.t('mcp.toolCount', { count: 1 })).toBe('1 个工具');
    expect(i18n.t('mcp.toolCount', { count: 5 })).toBe('5 个工具');
  });

  it('interpolates named placeholders', () => {
    expect(interpolate('{n} min ago', { n: 5 })).toBe('5 min ago');
    expect(interpolate('{missing} stays', {})).toBe('{missing} stays');
  });
});
