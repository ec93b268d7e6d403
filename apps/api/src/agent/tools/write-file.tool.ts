/** `write_file`: create or overwrite a workspace file atomically; the Skill roots are refused (Skills have their own tool). */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../../common/atomic-file';
import { mkdirPrivate, PRIVATE_FILE_MODE } from '../../common/private-fs';
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { requireString, toolError } from './tool-args';
import { describeFsError, WorkspacePathError, type WorkspacePaths } from './workspace-paths';

/** Number of characters (code points) in a text, as the messages count them. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * Writes `content` to a resolved path: parents created, temp file + fsync + rename. An existing file keeps its mode; a
 * new file is owner-only (0600, its new parent directories 0700), like everything else the server creates.
 */
export async function writeWorkspaceFile(absolute: string, display: string, content: string): Promise<void> {
  let mode = PRIVATE_FILE_MODE;
  try {
    const stat = await fs.stat(absolute);
    if (stat.isDirectory()) throw new WorkspacePathError(`${display} is a directory`);
    mode = stat.mode & 0o777;
  } catch (error) {
    if (error instanceof WorkspacePathError) throw error;
  }
  try {
    await mkdirPrivate(path.dirname(absolute));
    await writeFileAtomic(absolute, content, { mode });
  } catch (error) {
    throw new WorkspacePathError(describeFsError(error, display));
  }
}

export class WriteFileTool implements AgentTool {
  readonly name = 'write_file';
  readonly description =
    'Write a text file in the workspace (created with its parent directories, or overwritten). ' +
    'Skill directories are protected: use agent_skill_manage for Skills.';
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path relative to the workspace' },
      content: { type: 'string', description: 'The complete new content of the file' },
    },
    required: ['path', 'content'],
  };
  readonly readOnly = false;

  constructor(private readonly workspace: WorkspacePaths) {}

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const userPath = requireString(args, 'path');
    const content = requireString(args, 'content');
    try {
      const target = await this.workspace.resolveForWrite(userPath);
      if (target.relative === '') return toolError(`${target.display} is a directory`);
      ctx.signal.throwIfAborted();
      await writeWorkspaceFile(target.absolute, target.display, content);
      return `Wrote ${target.display} (${characterCount(content)} characters)`;
    } catch (error) {
      if (error instanceof WorkspacePathError) return toolError(error.message);
      throw error;
    }
  }
}
