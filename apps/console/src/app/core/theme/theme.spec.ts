import { TestBed } from '@angular/core/testing';

import { THEME_STORAGE_KEY, Theme } from './theme';

describe('Theme', () => {
  function mockPrefersDark(dark: boolean): void {
    Object.defineProperty(window, 'matchMedia', {
      configurable: true,
      value: (query: string) => ({ matches: dark && query.includes('dark'), media: query }) as MediaQueryList,
    });
  }

  beforeEach(() => {
    localStorage.clear();
    document.documentElement.className = '';
  });

  afterEach(() => {
    delete (window as { matchMedia?: unknown }).matchMedia;
  });

  it('Scenario: the theme follows the OS preference until the user picks one', () => {
    mockPrefersDark(true);
    const theme = TestBed.inject(Theme);
    expect(theme.mode()).toBe('dark');
    expect(document.documentElement.classList.contains('cc-dark')).toBe(true);
    expect(document.documentElement.style.colorScheme).toBe('dark');
  });

  it('Scenario: the chosen theme is remembered', () => {
    mockPrefersDark(true);
    TestBed.inject(Theme).toggle();
    expect(localStorage.getItem(THEME_STORAGE_KEY)).toBe('light');
    expect(document.documentElement.classList.contains('cc-light')).toBe(true);
    TestBed.resetTestingModule();
    expect(TestBed.inject(Theme).mode()).toBe('light');
  });
});
