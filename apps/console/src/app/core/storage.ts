/**
 * Tiny wrapper around Web Storage that never throws (private mode, disabled storage, quota).
 */
export function readStorage(key: string, storage: 'local' | 'session' = 'local'): string | null {
  try {
    return (storage === 'local' ? globalThis.localStorage : globalThis.sessionStorage)?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

export function writeStorage(key: string, value: string | null, storage: 'local' | 'session' = 'local'): void {
  try {
    const target = storage === 'local' ? globalThis.localStorage : globalThis.sessionStorage;
    if (!target) return;
    if (value === null) target.removeItem(key);
    else target.setItem(key, value);
  } catch {
    // storage unavailable: the preference simply is not remembered
  }
}
