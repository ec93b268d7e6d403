/**
 * `list_dir` (openspec builtin-tools): one directory of the workspace, directories first, 200 entries; links are not
 * followed.
 */
import { promises as fs, readdirSync, statSync, type Dirent } from 'node:fs';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { optionalString, toolError } from './tool-args';
import { describeFsError, WorkspacePathError, type WorkspacePaths } from './workspace-paths';

export const LIST_DIR_MAX_ENTRIES = 200;
/**
 * A directory whose own size is at most this is listed with one synchronous call: its entries are in the page cache
 * and reading them takes microseconds, less than a thread-pool round trip. Larger directories (thousands of entries)
 * are read asynchronously so that they never hold up the other chats. Same rule as read_file's small files.
 */
export const LIST_DIR_SYNC_MAX_BYTES = 64 * 1024;

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ListDirTool implements AgentTool {
  readonly name = 'list_dir';
  readonly description =
    'List a directory of the workspace (directories first, then files, each sorted by name; at most 200 entries). ' +
    'An empty path lists the workspace root.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Directory path relative to the workspace (default: the workspace root)' },
    },
    required: [],
  };
  readonly readOnly = true;

  constructor(private readonly workspace: WorkspacePaths) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const userPath = optionalString(args, 'path', '');
    try {
      const target = await this.workspace.resolve(userPath);
      let stat;
      try {
        stat = statSync(target.absolute); // metadata: cheaper synchronous than a thread-pool round trip
      } catch {
        return toolError(`directory not found: ${target.display}`);
      }
      if (!stat.isDirectory()) return toolError(`${target.display} is not a directory`);
      ctx.signal.throwIfAborted();
      let entries: Dirent[];
      try {
        entries =
          stat.size <= LIST_DIR_SYNC_MAX_BYTES
            ? readdirSync(target.absolute, { withFileTypes: true })
            : await fs.readdir(target.absolute, { withFileTypes: true });
      } catch (error) {
        return toolError(describeFsError(error, target.display));
      }
      const dirs: string[] = [];
      const files: string[] = [];
      const links: string[] = [];
      for (const entry of entries) {
        if (entry.isSymbolicLink()) links.push(entry.name);
        else if (entry.isDirectory()) dirs.push(entry.name);
        else files.push(entry.name);
      }
      const lines = [
        ...dirs.sort(byName).map((name) => `[dir]  ${name}`),
        ...[...files.map((name) => ({ name, line: `[file] ${name}` })), ...links.map((name) => ({ name, line: `[link] ${name}` }))]
          .sort((a, b) => byName(a.name, b.name))
          .map((item) => item.line),
      ];
      const header = `Directory: ${userPath === '' ? '(workspace)' : target.display}\n\n`;
      if (lines.length === 0) return `${header}(empty)`;
      const shown = lines.slice(0, LIST_DIR_MAX_ENTRIES).join('\n');
      if (lines.length > LIST_DIR_MAX_ENTRIES) {
        return `${header}${shown}\n(showing the first ${LIST_DIR_MAX_ENTRIES} of ${lines.length} entries)`;
      }
      return header + shown;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}
