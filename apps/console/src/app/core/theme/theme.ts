import { DOCUMENT, Injectable, inject, signal } from '@angular/core';

import { readStorage, writeStorage } from '../storage';

export type ThemeMode = 'light' | 'dark';
export const THEME_STORAGE_KEY = 'cashcode.theme';

/**
 * Light/dark theme. The stored choice wins; otherwise the OS preference (prefers-color-scheme).
 * The Material theme uses `light-dark()` tokens, so switching only sets `color-scheme` on <html>.
 */
@Injectable({ providedIn: 'root' })
export class Theme {
  private readonly document = inject(DOCUMENT);
  private readonly current = signal<ThemeMode>(this.initialMode());

  readonly mode = this.current.asReadonly();

  constructor() {
    this.apply(this.current());
  }

  toggle(): void {
    this.set(this.current() === 'dark' ? 'light' : 'dark');
  }

  set(mode: ThemeMode): void {
    this.current.set(mode);
    writeStorage(THEME_STORAGE_KEY, mode);
    this.apply(mode);
  }

  private apply(mode: ThemeMode): void {
    const root = this.document.documentElement;
    root.style.colorScheme = mode;
    root.classList.toggle('cc-dark', mode === 'dark');
    root.classList.toggle('cc-light', mode === 'light');
  }

  private initialMode(): ThemeMode {
    const stored = readStorage(THEME_STORAGE_KEY);
    if (stored === 'light' || stored === 'dark') return stored;
    const view = this.document.defaultView;
    return view?.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }
}
