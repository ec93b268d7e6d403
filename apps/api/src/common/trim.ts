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
