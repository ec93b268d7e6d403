/**
 * The YAML frontmatter of a SKILL.md, parsed with 1.1 semantics like PyYAML's safe_load (`yes`/`on` are booleans,
 * unquoted dates are dates, unknown tags are errors, duplicate keys keep the last value), after a linear scan has
 * refused what would make the parser's time grow faster than the text.
 */
import { parseDocument } from 'yaml';
import {
  FRONTMATTER_MAX_BLANK_LINES,
  FRONTMATTER_MAX_BYTES,
  FRONTMATTER_MAX_FLOW_DEPTH,
  SKILL_MD_MESSAGES,
} from './skill-md-rules';
import { utf8ByteLength } from './text-length';

/** The first line of a YAML parser message, without the code frame. */
function yamlMessage(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.replace(/:\s*$/, '').trim() || 'parse error';
}

/**
 * What would make the YAML parse super-linear, found in one linear scan: more than FRONTMATTER_MAX_BYTES, flow
 * brackets nested deeper than FRONTMATTER_MAX_FLOW_DEPTH (counted outside quoted scalars and comments), or more
 * than FRONTMATTER_MAX_BLANK_LINES blank lines in a row. Null when the frontmatter may be parsed.
 * A quote opens a quoted scalar only where a node can start (first on its line, or after `:`, `-`, `?`, `,`, `[`
 * or `{` and blanks); elsewhere, as in `it's`, it is text. Brackets in plain text are counted too, which can only
 * refuse more, never let a deep collection through.
 */
function frontmatterLimitProblem(source: string): string | null {
  if (utf8ByteLength(source) > FRONTMATTER_MAX_BYTES) return SKILL_MD_MESSAGES.frontmatterTooLarge;
  let depth = 0;
  let blankLines = 0;
  let lineBlank = true;
  /** the last character on this line that is not a blank ('' at the line start) */
  let previous = '';
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\n') {
      blankLines = lineBlank ? blankLines + 1 : 0;
      if (blankLines > FRONTMATTER_MAX_BLANK_LINES) return SKILL_MD_MESSAGES.frontmatterBlankLines;
      lineBlank = true;
      previous = '';
      continue;
    }
    if (char === ' ' || char === '\t' || char === '\r') continue;
    lineBlank = false;
    if (char === '#' && (i === 0 || /[ \t\n]/.test(source[i - 1]!))) {
      // a comment runs to the end of the line
      while (i + 1 < source.length && source[i + 1] !== '\n') i++;
      continue;
    }
    if ((char === '"' || char === "'") && (previous === '' || ':-?,[{'.includes(previous))) {
      // a quoted scalar: `\` escapes in double quotes, `''` is a quote in single quotes; it may span lines
      for (i++; i < source.length; i++) {
        const inner = source[i]!;
        if (inner === '\n') {
          // blank lines inside a quoted scalar count as well (the parser folds them)
          blankLines = lineBlank ? blankLines + 1 : 0;
          if (blankLines > FRONTMATTER_MAX_BLANK_LINES) return SKILL_MD_MESSAGES.frontmatterBlankLines;
          lineBlank = true;
        } else if (inner !== ' ' && inner !== '\t' && inner !== '\r') lineBlank = false;
        if (char === '"' && inner === '\\') i++;
        else if (inner === char && char === "'" && source[i + 1] === "'") i++;
        else if (inner === char) break;
      }
      previous = char;
      continue;
    }
    if (char === '[' || char === '{') {
      depth++;
      if (depth > FRONTMATTER_MAX_FLOW_DEPTH) return SKILL_MD_MESSAGES.frontmatterTooDeep;
    } else if ((char === ']' || char === '}') && depth > 0) depth--;
    previous = char;
  }
  return null;
}

export type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

export function parseYaml(source: string): Parsed {
  const limit = frontmatterLimitProblem(source);
  if (limit !== null) return { ok: false, error: limit };
  let doc;
  try {
    doc = parseDocument(source, {
      version: '1.1',
      uniqueKeys: false,
      intAsBigInt: true,
      prettyErrors: false,
      logLevel: 'silent',
    });
  } catch (err) {
    return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(err instanceof Error ? err.message : String(err))) };
  }
  const problem = doc.errors[0] ?? doc.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED');
  if (problem) return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(problem.message)) };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { ok: false, error: SKILL_MD_MESSAGES.invalidYaml(yamlMessage(err instanceof Error ? err.message : String(err))) };
  }
}
