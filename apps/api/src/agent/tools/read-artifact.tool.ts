/**
 * `read_artifact` (openspec agent-runner "Requirement: Tool output budget"): pages through a large tool result of the
 * current chat that the tool-output budget kept as an artifact. Offsets and lengths count characters (code points).
 */
import type { AgentTool, JsonSchemaObject, ToolContext, ToolResult } from '../agent-tool';
import { READ_ARTIFACT_MAX_CHARS, READ_ARTIFACT_TOOL } from '../tool-output-budget';
import { optionalInteger, requireString, toolError } from './tool-args';

export interface ArtifactSource {
  readArtifact(chatId: string, id: string): Promise<string | null>;
  /** whether the chat has an artifact (absent: assume so) */
  hasArtifacts?(chatId: string): boolean;
}

export class ReadArtifactTool implements AgentTool {
  readonly name = READ_ARTIFACT_TOOL;
  readonly description =
    'Read part of a large tool result that was kept as an artifact of this chat (its id is in the shortened result). ' +
    `Returns at most ${READ_ARTIFACT_MAX_CHARS.toLocaleString('en-US')} characters from the offset.`;
  readonly parameters: JsonSchemaObject = {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The artifact id named in the shortened tool result' },
      offset: { type: 'integer', description: 'First character to read (default 0)' },
      length: { type: 'integer', description: `Characters to read (default 8000, at most ${READ_ARTIFACT_MAX_CHARS})` },
    },
    required: ['id'],
  };
  readonly readOnly = true;

  constructor(private readonly artifacts: ArtifactSource) {}

  /** Offered once the chat has an artifact (the tool-output budget kept a result). */
  appliesTo(scope: { chatId: string }): boolean {
    return this.artifacts.hasArtifacts?.(scope.chatId) ?? true;
  }

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult | string> {
    const id = requireString(args, 'id').trim();
    const offset = optionalInteger(args, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    const length = optionalInteger(args, 'length', 8_000, 1, READ_ARTIFACT_MAX_CHARS);
    const text = await this.artifacts.readArtifact(ctx.chatId, id);
    if (text === null) return toolError(`no artifact "${id}" in this chat`);
    const chars = Array.from(text);
    if (offset >= chars.length) return toolError(`offset ${offset} is past the end of artifact "${id}" (${chars.length} characters)`);
    const end = Math.min(chars.length, offset + length);
    const rest = chars.length - end;
    return (
      `[artifact "${id}", characters ${offset}–${end} of ${chars.length}` +
      `${rest > 0 ? `; ${rest} more after this, continue with offset ${end}` : '; this is the end'}]\n` +
      chars.slice(offset, end).join('')
    );
  }
}
