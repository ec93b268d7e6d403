/**
 * `text` without the run of `char` at its end. A loop, not `replace(/x+$/)`: V8 tries such a pattern at every
 * position of every run of `x` and scans each run to its end, which is quadratic on a long run that does not end
 * the text.
 */
export function trimTrailing(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * The first `max` code points of `text` and whether anything was cut, without splitting the whole text into an
 * array (a 1 MiB tool output is cut to 500 code points by reading about 500).
 */
export function firstCodePoints(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let end = 0;
  for (let count = 0; count < max && end < text.length; count++) {
    const code = text.charCodeAt(end);
    const next = end + 1 < text.length ? text.charCodeAt(end + 1) : 0;
    end += code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return end >= text.length ? { text, cut: false } : { text: text.slice(0, end), cut: true };
}
