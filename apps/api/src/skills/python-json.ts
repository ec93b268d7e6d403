/**
 * JSON with Python's `json.dumps` spacing (`", "` and `": "`); `ascii` escapes non-ASCII like `ensure_ascii=True`.
 * The skill tools' results keep the exact format of the reference implementation the model was tuned on.
 */
export function pythonJson(value: unknown, ascii = false): string {
  const encodeString = (text: string): string => {
    const json = JSON.stringify(text);
    return ascii ? json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
  };
  const encode = (item: unknown): string => {
    if (item === null || item === undefined) return 'null';
    if (typeof item === 'string') return encodeString(item);
    if (typeof item === 'number') return Number.isFinite(item) ? String(item) : 'null';
    if (typeof item === 'boolean') return item ? 'true' : 'false';
    if (Array.isArray(item)) return `[${item.map(encode).join(', ')}]`;
    if (typeof item === 'object') {
      const parts = Object.entries(item as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${encodeString(k)}: ${encode(v)}`);
      return `{${parts.join(', ')}}`;
    }
    return encodeString(String(item));
  };
  return encode(value);
}
