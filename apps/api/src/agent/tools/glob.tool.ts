/** `glob` (openspec builtin-tools): files and directories matching a pattern at any depth, sorted, 100 results. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { optionalString, requireString, toolError } from './tool-args';
import { DEFAULT_WALK_LIMITS, normalizeGlobPattern, walkGlob, type WalkLimits } from './workspace-glob';
import { WorkspacePathError, type WorkspacePaths } from './workspace-paths';

export const GLOB_MAX_RESULTS = 100;

export class GlobTool implements AgentTool {
  readonly name = 'glob';
  readonly description =
    'Find files and directories in the workspace whose path matches a glob pattern (e.g. "*.py", "src/**/*.ts"). ' +
    'The pattern is applied at every depth below path. Results are sorted; at most 100 are shown.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'Glob pattern, e.g. "*.md" or "docs/**/*.txt"' },
      path: { type: 'string', description: 'Directory to search, relative to the workspace (default: the root)' },
    },
    required: ['pattern'],
  };
  readonly readOnly = true;

  constructor(
    private readonly workspace: WorkspacePaths,
    private readonly limits: WalkLimits = DEFAULT_WALK_LIMITS,
  ) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const pattern = requireString(args, 'pattern');
    const userPath = optionalString(args, 'path', '');
    try {
      const normalized = normalizeGlobPattern(pattern, 'pattern');
      const base = await this.workspace.resolve(userPath);
      let stat;
      try {
        stat = await fs.stat(base.absolute);
      } catch {
        return toolError(`directory not found: ${base.display}`);
      }
      if (!stat.isDirectory()) return toolError(`${base.display} is not a directory`);
      const { matches, incomplete } = await walkGlob(base.absolute, normalized, {
        onlyFiles: false,
        limits: this.limits,
        signal: ctx.signal,
      });
      if (matches.length === 0) {
        return incomplete
          ? `No files match \`${pattern}\` (the search stopped early: too many entries or too slow; narrow the path)`
          : `No files match \`${pattern}\``;
      }
      const lines = matches.slice(0, GLOB_MAX_RESULTS).map((match) => {
        const isDir = match.endsWith('/');
        const relative = this.workspace.relative(path.join(base.absolute, isDir ? match.slice(0, -1) : match));
        return `  ${relative}${isDir ? '/' : ''}`;
      });
      const notes: string[] = [];
      if (matches.length > GLOB_MAX_RESULTS) notes.push(`showing the first ${GLOB_MAX_RESULTS}`);
      if (incomplete) notes.push('the search stopped early: too many entries or too slow; narrow the path');
      const note = notes.length > 0 ? `\n(${notes.join('; ')})` : '';
      return `Matches for \`${pattern}\` (${matches.length} in total):\n${lines.join('\n')}${note}`;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}
