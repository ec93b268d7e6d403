import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type {
  DeleteInvalidSkillResponse,
  SkillAvailability,
  SkillContentResponse,
  SkillDetail,
  SkillPreApprovalItem,
  SkillPreApprovalKind,
  SkillPreApprovals,
  SkillListResponse,
  SkillRecord,
  SkillRecordWithPath,
  SkillReplaceResponse,
  SkillRequirementsRecord,
  SkillSource,
  SkillVersionsResponse,
} from '@cashcode/contracts';
import { SKILL_AVAILABILITIES, SKILL_SOURCES } from '@cashcode/contracts';

export class SkillRequirementsDto implements SkillRequirementsRecord {
  @ApiProperty({ type: [String] }) tools!: string[];
  @ApiProperty({ type: [String] }) mcp_servers!: string[];
  @ApiProperty({ type: [String] }) bins!: string[];
  @ApiProperty({ type: [String] }) env!: string[];
}

const PRE_APPROVAL_KINDS: SkillPreApprovalKind[] = [
  'any_command',
  'command_prefix',
  'exact_command',
  'tool',
  'mcp_server',
  'mcp_tool',
  'ignored',
];

export class SkillPreApprovalItemDto implements SkillPreApprovalItem {
  @ApiProperty({ example: 'Bash(git status:*)', description: 'the allowed-tools entry as written' }) entry!: string;
  @ApiProperty({ enum: PRE_APPROVAL_KINDS }) kind!: SkillPreApprovalKind;
  @ApiProperty({ example: 'git status', description: 'command words, tool or MCP server' }) value!: string;
  @ApiPropertyOptional({ description: 'MCP server (mcp_server, mcp_tool)' }) server?: string;
  @ApiProperty({ description: 'lets the model run any command' }) broad!: boolean;
  @ApiProperty({ example: 'commands starting with `git status`' }) text!: string;
}

export class SkillPreApprovalsDto implements SkillPreApprovals {
  @ApiProperty({ type: [String], description: 'the allowed-tools entries' }) requested!: string[];
  @ApiProperty({ description: 'the owner granted them for the current content' }) granted!: boolean;
  @ApiProperty({ description: 'sha256 hex of the whole package (SKILL.md and every supporting file); grant with it' })
  hash!: string;
  @ApiProperty({ type: [SkillPreApprovalItemDto] }) summary!: SkillPreApprovalItemDto[];
  @ApiProperty({ description: 'some entry allows any command' }) broad!: boolean;
  @ApiPropertyOptional({ description: 'ISO 8601 time of the grant in force' }) granted_at?: string;
}

export class SkillRecordDto implements SkillRecord {
  @ApiProperty({ example: 'weather' }) name!: string;
  @ApiProperty({ example: 'Weather' }) display_name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ example: 1 }) version!: number;
  @ApiProperty({ type: String, nullable: true, example: '1.0.2', description: 'the frontmatter version as written' })
  version_label!: string | null;
  @ApiProperty({ type: [String] }) tags!: string[];
  @ApiProperty({ type: [String] }) triggers!: string[];
  @ApiProperty() always!: boolean;
  @ApiProperty({ enum: SKILL_SOURCES }) source!: SkillSource;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ enum: SKILL_AVAILABILITIES }) availability!: SkillAvailability;
  @ApiProperty({ type: [String], example: ['bin:gh'] }) missing!: string[];
  @ApiProperty({ description: 'sha256 hex of SKILL.md' }) hash!: string;
  @ApiProperty({ enum: SKILL_SOURCES, isArray: true }) shadowed_sources!: SkillSource[];
  @ApiProperty({ description: 'a user or agent package hiding a built-in of the same name' }) shadows_builtin!: boolean;
  @ApiProperty({ type: [String] }) validation_errors!: string[];
  @ApiProperty({ type: SkillRequirementsDto }) requires!: SkillRequirementsDto;
  @ApiProperty({ type: SkillRequirementsDto }) optional!: SkillRequirementsDto;
  @ApiProperty({ description: 'source !== builtin' }) mutable!: boolean;
  @ApiProperty({ type: String, nullable: true }) license!: string | null;
  @ApiProperty({ type: String, nullable: true }) compatibility!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) metadata!: Record<string, string>;
  @ApiProperty({ type: [String], nullable: true, description: 'tools allowed while loaded; null → no restriction' })
  allowed_tools!: string[] | null;
  @ApiPropertyOptional({
    type: SkillPreApprovalsDto,
    nullable: true,
    description:
      'what allowed-tools would pre-approve and whether the owner granted it for this exact content; null without ' +
      'allowed-tools. Pre-approvals apply only while granted.',
  })
  pre_approvals?: SkillPreApprovalsDto | null;
}

export class SkillRecordWithPathDto extends SkillRecordDto implements SkillRecordWithPath {
  @ApiProperty({ example: 'skills/user/weather', description: 'logical location, never a host path' }) path!: string;
}

export class SkillDetailDto extends SkillRecordWithPathDto implements SkillDetail {
  @ApiProperty() body_preview!: string;
  @ApiProperty() body_truncated!: boolean;
  @ApiProperty({ type: [String], description: 'snapshot ids, newest first' }) versions!: string[];
}

export class SkillReplaceResponseDto extends SkillRecordWithPathDto implements SkillReplaceResponse {
  @ApiProperty({ example: '1767225600000-1a2b3c4d' }) snapshot!: string;
}

export class SkillListResponseDto implements SkillListResponse {
  @ApiProperty({ type: [SkillRecordDto] }) items!: SkillRecordDto[];
  @ApiProperty() total!: number;
  @ApiProperty() page!: number;
  @ApiProperty() page_size!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { 'user:broken': ['SKILL.md must start with YAML frontmatter'] },
  })
  invalid!: Record<string, string[]>;
}

export class SkillContentResponseDto implements SkillContentResponse {
  @ApiProperty() name!: string;
  @ApiProperty() display_name!: string;
  @ApiProperty() content!: string;
  @ApiProperty() hash!: string;
  @ApiProperty({ enum: SKILL_SOURCES }) source!: SkillSource;
  @ApiProperty() mutable!: boolean;
}

export class SkillValidationResponseDto {
  @ApiProperty() valid!: boolean;
  @ApiPropertyOptional() name?: string;
  @ApiPropertyOptional() hash?: string;
  @ApiProperty({ type: [String] }) errors!: string[];
}

export class SkillVersionsResponseDto implements SkillVersionsResponse {
  @ApiProperty() name!: string;
  @ApiProperty({ type: [String] }) versions!: string[];
}

export class DeleteInvalidSkillResponseDto implements DeleteInvalidSkillResponse {
  @ApiProperty({ enum: SKILL_SOURCES }) source!: SkillSource;
  @ApiProperty() directory!: string;
  @ApiProperty({ example: 'invalid/user/0123456789abcdef/1767225600000-1a2b3c4d' }) snapshot!: string;
}
