/**
 * `grep` (openspec builtin-tools): a per-line regex search over workspace files. Binary files (a NUL byte in the first
 * 512 bytes) are skipped, 50 results, bounded in files, bytes and time; the regex runs in a worker that is stopped when
 * the time budget is spent, so a catastrophic pattern cannot stall the server.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { runGrepWorker, type GrepFile } from './grep-worker';
import { formatSeconds, optionalString, requireString, toolError } from './tool-args';
import { DEFAULT_WALK_LIMITS, normalizeGlobPattern, walkGlob, type WalkLimits } from './workspace-glob';
import { WorkspacePathError, type WorkspacePaths } from './workspace-paths';
import { ATTACHMENTS_FOLDER, BROWSER_DOWNLOADS_FOLDER } from '../../common/untrusted-sources';

export const GREP_MAX_RESULTS = 50;
/**
 * Matches shown per file when a directory is searched: one file that matches often (a log, a generated file) cannot
 * take every line of the answer, the other files' matches stay visible, and the answer says how to see the rest (grep
 * that file). Searching one file shows up to GREP_MAX_RESULTS of its matches.
 */
export const GREP_MAX_PER_FILE = 10;

export interface GrepLimits {
  /** budget for the regex search itself (the worker) */
  timeoutMs: number;
  /** files searched at most */
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  maxLineChars: number;
  walk: WalkLimits;
}

export const DEFAULT_GREP_LIMITS: GrepLimits = {
  timeoutMs: 10_000,
  maxFiles: 20_000,
  maxFileBytes: 4 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  maxLineChars: 500,
  walk: DEFAULT_WALK_LIMITS,
};

export type CompiledPattern = { ok: true; source: string; flags: string } | { ok: false; message: string };

/**
 * Compiles a user regex (Python flavour where cheap to support: leading inline flags `(?i)`/`(?m)`/`(?s)`,
 * `(?P<name>…)` and `(?P=name)`). Compilation is linear; only matching needs the time bound.
 */
export function compileUserRegex(pattern: string): CompiledPattern {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(inline[1])].join('');
    source = source.slice(inline[0].length);
  }
  source = source.replace(/\(\?P</g, '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>');
  try {
    new RegExp(source, flags);
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  return { ok: true, source, flags };
}

export class GrepTool implements AgentTool {
  readonly name = 'grep';
  readonly description =
    'Search workspace files line by line with a regular expression (binary files skipped). At most 50 matches, 10 per ' +
    'file in a directory search, grouped by file as "line:text". Narrow with path and file_pattern (a glob such as "*.py").';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'Regular expression searched in each line' },
      path: { type: 'string', description: 'File or directory to search, relative to the workspace (default: the root)' },
      file_pattern: { type: 'string', description: 'Only search files whose name matches this glob (default: all files)' },
    },
    required: ['pattern'],
  };
  readonly readOnly = true;

  constructor(
    private readonly workspace: WorkspacePaths,
    private readonly limits: GrepLimits = DEFAULT_GREP_LIMITS,
  ) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const pattern = requireString(args, 'pattern');
    const userPath = optionalString(args, 'path', '');
    const filePattern = optionalString(args, 'file_pattern', '');
    const compiled = compileUserRegex(pattern);
    if (!compiled.ok) return toolError(`invalid regular expression: ${compiled.message}`);
    try {
      const base = await this.workspace.resolve(userPath);
      let stat;
      try {
        stat = await fs.stat(base.absolute);
      } catch {
        return toolError(`not found: ${base.display}`);
      }
      let files: GrepFile[];
      let walkIncomplete = false;
      let leftOut = false;
      const directory = stat.isDirectory();
      if (stat.isFile()) {
        files = [{ absolute: base.absolute, relative: base.relative }];
      } else if (stat.isDirectory()) {
        const globPattern = normalizeGlobPattern(filePattern === '' ? '*' : filePattern, 'file_pattern');
        const walk = await walkGlob(base.absolute, globPattern, {
          onlyFiles: true,
          limits: this.limits.walk,
          signal: ctx.signal,
        });
        // someone else's files (uploads, a page's downloads) only when the path points into them: the result is then
        // marked untrusted by its arguments (common/untrusted-sources.ts); a search over the rest stays trusted
        const all = walk.matches.map((relativeToBase) => {
          const absolute = path.join(base.absolute, relativeToBase);
          return { absolute, relative: this.workspace.relative(absolute) };
        });
        const own = isOthersFolder(base.relative) ? all : all.filter((file) => !isOthersFolder(file.relative));
        leftOut = own.length < all.length;
        walkIncomplete = walk.incomplete || own.length > this.limits.maxFiles;
        files = own.slice(0, this.limits.maxFiles);
      } else {
        return toolError(`${base.display} is neither a file nor a directory`);
      }
      const outcome = await runGrepWorker(
        {
          files,
          source: compiled.source,
          flags: compiled.flags,
          maxMatches: GREP_MAX_RESULTS + 1,
          ...(directory ? { maxPerFile: GREP_MAX_PER_FILE } : {}),
          maxFileBytes: this.limits.maxFileBytes,
          maxTotalBytes: this.limits.maxTotalBytes,
          maxLineChars: this.limits.maxLineChars,
        },
        this.limits.timeoutMs,
        ctx.signal,
      );
      const budget = formatSeconds(this.limits.timeoutMs);
      if (outcome.timedOut && outcome.matches.length === 0) {
        return toolError(
          `regex timed out after ${budget}: the pattern may backtrack catastrophically or the search covers too much; ` +
            'simplify the pattern or narrow path / file_pattern',
        );
      }
      const notes: string[] = [];
      if (outcome.timedOut) notes.push(`regex timed out after ${budget}; the results are incomplete`);
      if (walkIncomplete || outcome.budgetExhausted) notes.push('the search stopped early: too many files or bytes; narrow path / file_pattern');
      if (outcome.truncatedFiles > 0) notes.push(`${outcome.truncatedFiles} large file(s) were only searched in part`);
      if (leftOut) notes.push(`${OTHERS_FOLDERS.join('/ and ')}/ are searched only when path points into them`);
      const noteText = notes.length > 0 ? `\n(${notes.join('; ')})` : '';
      if (outcome.matches.length === 0 && outcome.moreInFile.size === 0) return `No content matches \`${pattern}\`${noteText}`;
      const limited = outcome.matches.length > GREP_MAX_RESULTS;
      const shown = outcome.matches.slice(0, GREP_MAX_RESULTS);
      let hidden = 0;
      for (const count of outcome.moreInFile.values()) hidden += count;
      const total = shown.length + hidden;
      const header = limited
        ? `First ${GREP_MAX_RESULTS} matches shown; there are more (narrow path / file_pattern):`
        : hidden > 0
          ? `${total} matches, ${shown.length} shown:`
          : `${total} ${total === 1 ? 'match' : 'matches'}:`;
      return `${header}\n${groupedByFile(shown, outcome.moreInFile)}${noteText}`;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}

/**
 * Matches grouped by file, the way ripgrep prints them with `--heading`: the path on a line of its own, then its
 * `line:text` lines; a blank line before each further file. A path is written once however many of its lines match,
 * which is most of the bytes of a search that hits one file often (every byte is paid again on each later request).
 */
export function groupedByFile(
  matches: ReadonlyArray<{ relative: string; line: number; text: string }>,
  moreInFile: ReadonlyMap<string, number> = new Map(),
): string {
  const out: string[] = [];
  let current: string | null = null;
  const closeFile = () => {
    const more = current === null ? 0 : (moreInFile.get(current) ?? 0);
    if (more > 0) out.push(`(${more} more in this file: grep with path ${JSON.stringify(current)})`);
  };
  for (const match of matches) {
    if (match.relative !== current) {
      closeFile();
      if (current !== null) out.push('');
      out.push(match.relative);
      current = match.relative;
    }
    out.push(`${match.line}:${match.text}`);
  }
  closeFile();
  return out.join('\n');
}

/** Workspace folders holding other people's content: uploads to chats and what browser pages downloaded. */
const OTHERS_FOLDERS = [ATTACHMENTS_FOLDER, BROWSER_DOWNLOADS_FOLDER];

function isOthersFolder(relative: string): boolean {
  const top = relative.split('/')[0] ?? '';
  return OTHERS_FOLDERS.includes(top);
}
