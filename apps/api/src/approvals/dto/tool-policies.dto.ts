/** Request and response shapes of `/api/settings/tool-policies` and `/api/approvals/audit` (OpenAPI + validation). */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import {
  isRecord,
  APPROVAL_DECISIONS,
  MCP_SERVER_NAME_PATTERN,
  TOOL_POLICIES,
  TOOL_RISKS,
  type ApprovalAuditEntry,
  type ApprovalAuditResponse,
  type ApprovalDecision,
  type ApprovalResolver,
  type StandingRule,
  type StandingRuleScope,
  type ToolPoliciesResponse,
  type ToolPolicy,
  type ToolPolicyEntry,
  type ToolRisk,
  type UpdateToolPoliciesRequest,
  type SubagentRef,
} from '@cashcode/contracts';
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT } from '../approval-audit';
import { MAX_POLICY_ENTRIES, MAX_RULES, isToolKey, isToolPolicy } from '../tool-policy-store';

/** An object mapping valid keys to `allow` | `ask` | `deny`. */
function IsPolicyMap(validKey: (key: string) => boolean, keys: string): PropertyDecorator {
  return ValidateBy({
    name: 'isPolicyMap',
    validator: {
      validate: (value: unknown) =>
        isRecord(value) &&
        Object.keys(value).length <= MAX_POLICY_ENTRIES &&
        Object.entries(value).every(([key, policy]) => validKey(key) && isToolPolicy(policy)),
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must be an object of at most ${MAX_POLICY_ENTRIES} entries mapping ${keys} to ` +
        `one of ${TOOL_POLICIES.join(', ')}`,
    },
  });
}

const POLICY_MAP_SCHEMA = {
  type: 'object' as const,
  additionalProperties: { type: 'string', enum: [...TOOL_POLICIES] },
};

export class UpdateToolPoliciesDto implements UpdateToolPoliciesRequest {
  @ApiPropertyOptional({
    ...POLICY_MAP_SCHEMA,
    example: { exec: 'ask', network: 'allow' },
    description: `policy per risk class (${TOOL_RISKS.join(', ')}); the given classes are changed, the others kept`,
  })
  @IsOptional()
  @IsPolicyMap((key) => (TOOL_RISKS as readonly string[]).includes(key), `risk classes (${TOOL_RISKS.join(', ')})`)
  defaults?: Partial<Record<ToolRisk, ToolPolicy>>;

  @ApiPropertyOptional({
    ...POLICY_MAP_SCHEMA,
    example: { web_fetch: 'deny', 'everything/echo': 'allow' },
    description: 'explicit per-tool policies; replaces the stored map. Keys: a built-in tool name, or `<server>/<tool>` for MCP tools',
  })
  @IsOptional()
  @IsPolicyMap(isToolKey, 'tool names (`exec`, `<server>/<tool>`)')
  tools?: Record<string, ToolPolicy>;

  @ApiPropertyOptional({
    ...POLICY_MAP_SCHEMA,
    example: { github: 'ask' },
    description: 'per-MCP-server policies (every tool of the server without a per-tool policy); replaces the stored map',
  })
  @IsOptional()
  @IsPolicyMap((key) => MCP_SERVER_NAME_PATTERN.test(key), 'MCP server names')
  servers?: Record<string, ToolPolicy>;

  @ApiPropertyOptional({
    type: [String],
    example: ['rule_0123456789abcdef'],
    description: 'ids of the standing rules to keep; the others are deleted (omit to keep all). Unknown ids are ignored',
  })
  @IsOptional()
  @IsArray({ message: 'keep_rule_ids must be an array of rule ids' })
  @ArrayMaxSize(MAX_RULES)
  @IsString({ each: true, message: 'keep_rule_ids must contain strings' })
  @MaxLength(64, { each: true, message: 'a rule id has at most 64 characters' })
  keep_rule_ids?: string[];
}

const SCOPE_SCHEMA = {
  type: 'object' as const,
  additionalProperties: true,
  example: { kind: 'exec_command', argv: ['git', 'status'] },
  description:
    'what the rule approves: `{kind: "exec_program", program}` (that program with any arguments; only programs that ' +
    'run no other code through their options, see `inactive_reason`), `{kind: "exec_command", argv}` (a simple command ' +
    'whose words are exactly `argv`), `{kind: "tool", tool}` (a built-in tool) or `{kind: "mcp_tool", server, tool}` ' +
    '(one MCP tool)',
};

export class StandingRuleDto implements StandingRule {
  @ApiProperty({ example: 'rule_0123456789abcdef' }) id!: string;
  @ApiProperty(SCOPE_SCHEMA) scope!: StandingRuleScope;
  @ApiProperty({ example: '2026-07-26T12:00:00.000+08:00', description: 'ISO 8601 with offset' }) created_at!: string;
  @ApiPropertyOptional({
    example: 'git can run other programs or code through its options, so a rule for it with any arguments covers nothing. Allow an exact command instead.',
    description: 'present when the stored rule covers nothing any more (e.g. an `exec_program` rule for a program that can run other code); it stays until revoked',
  })
  inactive_reason?: string;
}

export class ToolPolicyEntryDto implements ToolPolicyEntry {
  @ApiProperty({ example: 'exec', description: 'the key in `tools`: built-in name or `<server>/<tool>`' }) name!: string;
  @ApiProperty({ enum: TOOL_RISKS }) risk!: ToolRisk;
  @ApiProperty({ enum: TOOL_POLICIES, description: 'the policy in force (rules and Skills aside)' }) policy!: ToolPolicy;
  @ApiProperty({ description: 'true when the policy comes from `tools[name]`' }) explicit!: boolean;
  @ApiPropertyOptional() server?: string;
  @ApiPropertyOptional({ description: 'MCP readOnlyHint' }) read_only?: boolean;
  @ApiPropertyOptional({ description: 'MCP destructiveHint' }) destructive?: boolean;
  @ApiPropertyOptional() title?: string;
}

export class ToolPoliciesResponseDto implements ToolPoliciesResponse {
  @ApiProperty({ ...POLICY_MAP_SCHEMA, example: { read: 'allow', write: 'allow', network: 'allow', exec: 'ask', mcp: 'ask', memory_write: 'ask', browser_action: 'ask' } })
  defaults!: Record<ToolRisk, ToolPolicy>;
  @ApiProperty(POLICY_MAP_SCHEMA) tools!: Record<string, ToolPolicy>;
  @ApiProperty(POLICY_MAP_SCHEMA) servers!: Record<string, ToolPolicy>;
  @ApiProperty({ type: [StandingRuleDto] }) rules!: StandingRuleDto[];
  @ApiProperty({ type: [ToolPolicyEntryDto], description: 'built-in tools and the tools of connected MCP servers' })
  known_tools!: ToolPolicyEntryDto[];
}

export class ListApprovalAuditQueryDto {
  @ApiPropertyOptional({ description: 'entries to skip (newest first)', minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'offset must be an integer' })
  @Min(0, { message: 'offset must be 0 or more' })
  @Max(1_000_000_000, { message: 'offset is too large' })
  offset?: number;

  @ApiPropertyOptional({ description: 'most entries to return', minimum: 1, maximum: AUDIT_MAX_LIMIT, default: AUDIT_DEFAULT_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${AUDIT_MAX_LIMIT}` })
  @Max(AUDIT_MAX_LIMIT, { message: `limit must be between 1 and ${AUDIT_MAX_LIMIT}` })
  limit?: number;
}

export class ApprovalAuditEntryDto implements ApprovalAuditEntry {
  @ApiProperty({ example: '2026-07-26T12:00:00.000+08:00' }) at!: string;
  @ApiProperty() chat_id!: string;
  @ApiProperty() call_id!: string;
  @ApiProperty({ example: 'exec', description: 'the tool name the model called (MCP: the wrapper name)' }) tool!: string;
  @ApiProperty({ enum: TOOL_RISKS }) risk!: ToolRisk;
  @ApiProperty({ enum: APPROVAL_DECISIONS }) decision!: ApprovalDecision;
  @ApiProperty({ enum: ['user', 'policy', 'timeout', 'cancel'] }) by!: ApprovalResolver;
  @ApiProperty({ example: 'git status', description: 'redacted command (exec) or argument JSON, at most 500 characters' })
  preview!: string;
  @ApiPropertyOptional({ description: 'MCP server of an MCP tool' }) server?: string;
  @ApiPropertyOptional({
    description: "a sub-agent's call: the parent's delegate call and the child's task",
    example: { call_id: 'call_1', task: 'Summarise the logs' },
  })
  subagent?: SubagentRef;
}

export class ApprovalAuditResponseDto implements ApprovalAuditResponse {
  @ApiProperty({ type: [ApprovalAuditEntryDto] }) entries!: ApprovalAuditEntryDto[];
  @ApiProperty({ description: 'entries in the log' }) total!: number;
  @ApiProperty() offset!: number;
  @ApiProperty() limit!: number;
}
