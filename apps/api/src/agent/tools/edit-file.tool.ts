/** `edit_file` (openspec builtin-tools, skills): replace one unique occurrence of `old_string`, written atomically. */
import { promises as fs } from 'node:fs';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { requireString, toolError } from './tool-args';
import { describeFsError, WorkspacePathError, type WorkspacePaths } from './workspace-paths';
import { writeWorkspaceFile } from './write-file.tool';

/** edit_file refuses files larger than this (the whole file is rewritten) */
export const EDIT_FILE_MAX_BYTES = 10 * 1024 * 1024;

/** Non-overlapping occurrences of `needle` in `haystack` (Python's str.count). */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  let index = haystack.indexOf(needle);
  while (index !== -1) {
    count += 1;
    index = haystack.indexOf(needle, index + needle.length);
  }
  return count;
}

export class EditFileTool implements AgentTool {
  readonly name = 'edit_file';
  readonly description =
    'Edit a workspace file by replacing old_string with new_string. old_string must occur exactly once ' +
    '(include surrounding lines to make it unique). Skill directories are protected: use agent_skill_manage.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path relative to the workspace' },
      old_string: { type: 'string', description: 'The exact text to replace (must be unique in the file)' },
      new_string: { type: 'string', description: 'The replacement text' },
    },
    required: ['path', 'old_string', 'new_string'],
  };
  readonly readOnly = false;

  constructor(private readonly workspace: WorkspacePaths) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const userPath = requireString(args, 'path');
    const oldString = requireString(args, 'old_string');
    const newString = requireString(args, 'new_string');
    try {
      const target = await this.workspace.resolveForWrite(userPath);
      let stat;
      try {
        stat = await fs.stat(target.absolute);
      } catch {
        return toolError(`file not found: ${target.display}`);
      }
      if (!stat.isFile()) return toolError(`${target.display} is not a file`);
      if (stat.size > EDIT_FILE_MAX_BYTES) return toolError(`${target.display} is too large to edit (over 10 MiB)`);
      if (oldString === '') return toolError('old_string must not be empty');
      let content: string;
      try {
        content = await fs.readFile(target.absolute, { encoding: 'utf8', signal: ctx.signal });
      } catch (error) {
        ctx.signal.throwIfAborted();
        return toolError(describeFsError(error, target.display));
      }
      const count = countOccurrences(content, oldString);
      if (count === 0) {
        return toolError(`old_string was not found; check that it matches the file exactly (file: ${target.display})`);
      }
      if (count > 1) {
        return toolError(`old_string occurs ${count} times in the file; include more surrounding context to make it unique`);
      }
      const index = content.indexOf(oldString);
      const updated = content.slice(0, index) + newString + content.slice(index + oldString.length);
      ctx.signal.throwIfAborted();
      await writeWorkspaceFile(target.absolute, target.display, updated);
      return `Replaced the specified content in ${target.display}`;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}
