import { DOCUMENT, Injectable, computed, inject, signal } from '@angular/core';

import { readStorage, writeStorage } from '../storage';
import { EN_MESSAGES, type MessageKey } from './messages.en';
import { ZH_CN_MESSAGES } from './messages.zh-cn';

export type Language = 'en' | 'zh-CN';
export type { MessageKey };

/** A count-bearing message: the catalogs hold `<key>.one`, `<key>.other` (and any other CLDR category a language uses). */
export type PluralKey = MessageKey extends infer K ? (K extends `${infer Base}.other` ? Base : never) : never;

export const LANGUAGES: readonly { code: Language; label: string }[] = [
  { code: 'en', label: 'English' },
  { code: 'zh-CN', label: '简体中文' },
];

export const LANGUAGE_STORAGE_KEY = 'cashcode.lang';

const DICTIONARIES: Record<Language, Record<MessageKey, string>> = {
  en: EN_MESSAGES,
  'zh-CN': ZH_CN_MESSAGES,
};

export type MessageParams = Record<string, string | number>;

/** Replaces `{name}` placeholders; unknown placeholders are left as they are. */
export function interpolate(template: string, params?: MessageParams): string {
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole,
  );
}

function isLanguage(value: string | null): value is Language {
  return value === 'en' || value === 'zh-CN';
}

/**
 * Signal-based translations: English by default, Simplified Chinese on request; the choice is kept in
 * localStorage. Templates call `i18n.t(key)`, which reads the language signal, so OnPush views re-render
 * when the language changes.
 */
@Injectable({ providedIn: 'root' })
export class I18n {
  private readonly document = inject(DOCUMENT);
  private readonly language = signal<Language>(this.initialLanguage());

  readonly lang = this.language.asReadonly();
  /** BCP 47 tag for Intl APIs */
  readonly locale = computed(() => (this.language() === 'zh-CN' ? 'zh-CN' : 'en'));

  constructor() {
    this.document.documentElement.lang = this.language();
  }

  /**
   * The message of `key` in the current language. A plural key (see PluralKey) needs a numeric `count` param and
   * picks `<key>.<category>` by `Intl.PluralRules` (en: one/other; zh-CN: other only), falling back to `.other`.
   */
  t(key: MessageKey | PluralKey, params?: MessageParams): string {
    const dictionary = DICTIONARIES[this.language()] as Record<string, string | undefined>;
    const english = EN_MESSAGES as Record<string, string | undefined>;
    const template = dictionary[key] ?? english[key] ?? this.pluralTemplate(key, params, dictionary, english);
    return interpolate(template, params);
  }

  setLanguage(language: Language): void {
    this.language.set(language);
    writeStorage(LANGUAGE_STORAGE_KEY, language);
    this.document.documentElement.lang = language;
  }

  private pluralTemplate(
    key: string,
    params: MessageParams | undefined,
    dictionary: Record<string, string | undefined>,
    english: Record<string, string | undefined>,
  ): string {
    const count = params?.['count'];
    const category = typeof count === 'number' ? new Intl.PluralRules(this.locale()).select(count) : 'other';
    return dictionary[`${key}.${category}`] ?? dictionary[`${key}.other`] ?? english[`${key}.other`] ?? key;
  }

  private initialLanguage(): Language {
    const stored = readStorage(LANGUAGE_STORAGE_KEY);
    return isLanguage(stored) ? stored : 'en';
  }
}
