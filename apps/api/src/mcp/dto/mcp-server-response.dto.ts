import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type {
  McpImportResponse,
  McpImportSkipped,
  McpServerListResponse,
  McpResourceRecord,
  McpServerRecord,
  McpServerResourcesResponse,
  McpServerStatus,
  McpServerToolsResponse,
  McpToolAnnotations,
  McpToolRecord,
  McpToolSource,
  McpTransportType,
} from '@cashcode/contracts';

const STATUSES: McpServerStatus[] = ['disconnected', 'connecting', 'connected', 'error', 'reconnecting', 'needs_auth'];

export class McpServerRecordDto implements McpServerRecord {
  @ApiProperty({ example: 'test_sse_mcp' }) name!: string;
  @ApiProperty({ example: 'Test SSE MCP' }) display_name!: string;
  @ApiProperty({ example: '' }) description!: string;
  @ApiProperty({ enum: ['stdio', 'sse', 'streamable_http'] }) type!: McpTransportType;
  @ApiProperty({ example: 'http://127.0.0.1:8090/sse', description: "'' for stdio servers" }) url!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { Authorization: '********' },
    description: 'header names sorted; values are always masked',
  })
  headers!: Record<string, string>;
  @ApiProperty() builtin!: boolean;
  @ApiProperty({ description: '!builtin' }) mutable!: boolean;
  @ApiProperty({ enum: STATUSES }) status!: McpServerStatus;
  @ApiProperty({ description: 'status == "connected"' }) connected!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'redacted error of the last attempt' })
  status_error!: string | null;
  @ApiProperty({ example: 1, description: 'live tools (0 when not connected)' }) tool_count!: number;
  @ApiPropertyOptional({ example: 'npx', description: 'user stdio entries: the program' }) command?: string;
  @ApiPropertyOptional({ type: [String], description: 'user stdio entries: its arguments' }) args?: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { API_KEY: '********' },
    description: 'user stdio entries: variable names sorted; values are always masked',
  })
  env?: Record<string, string>;
  @ApiPropertyOptional({ description: "user stdio entries: the working directory ('' = default)" }) cwd?: string;
  @ApiPropertyOptional({ description: 'while reconnecting: the attempt scheduled next (1-based)' })
  reconnect_attempt?: number;
  @ApiPropertyOptional({ description: 'while reconnecting: when it runs (ISO 8601)' }) next_retry_at?: string;
}

export class McpImportSkippedDto implements McpImportSkipped {
  @ApiProperty({ description: 'the name as written in the imported file' }) name!: string;
  @ApiProperty({ enum: ['conflict', 'unsupported_type', 'invalid', 'input_placeholder'] })
  reason!: McpImportSkipped['reason'];
  @ApiProperty({ description: 'why, naming the field when one is invalid' }) detail!: string;
}

export class McpImportResponseDto implements McpImportResponse {
  @ApiProperty({ type: () => [McpServerRecordDto] }) created!: McpServerRecordDto[];
  @ApiProperty({ type: [McpImportSkippedDto] }) skipped!: McpImportSkippedDto[];
}

export class McpServerListResponseDto implements McpServerListResponse {
  @ApiProperty({ type: [McpServerRecordDto] }) servers!: McpServerRecordDto[];
}

export class McpToolRecordDto implements McpToolRecord {
  @ApiProperty({ example: 'mcp_test_sse_mcp_say_hello' }) name!: string;
  @ApiProperty({ example: 'say_hello' }) original_name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) input_schema!: Record<string, unknown>;
  @ApiProperty({ enum: ['live', 'cache'] }) source!: McpToolSource;
  @ApiProperty({ description: 'true for live tools of a connected server' }) callable!: boolean;
  @ApiPropertyOptional({
    enum: ['task_required'],
    description: 'why a live tool is not callable: task_required — the server runs it only as a task, which is not offered',
  })
  unavailable_reason?: 'task_required';
  @ApiPropertyOptional({ description: "the tool's display title (`title`, else `annotations.title`)" }) title?: string;
  @ApiPropertyOptional({
    type: 'object',
    properties: {
      title: { type: 'string' },
      readOnlyHint: { type: 'boolean' },
      destructiveHint: { type: 'boolean' },
      idempotentHint: { type: 'boolean' },
      openWorldHint: { type: 'boolean' },
    },
    description: 'behaviour hints the server declared in tools/list; absent when none. readOnlyHint decides the risk class',
  })
  annotations?: McpToolAnnotations;
}

export class McpServerToolsResponseDto implements McpServerToolsResponse {
  @ApiProperty() server!: string;
  @ApiProperty() display_name!: string;
  @ApiProperty({ type: [McpToolRecordDto] }) tools!: McpToolRecordDto[];
  @ApiProperty({ enum: ['live', 'cache', 'none'] }) source!: McpToolSource | 'none';
  @ApiProperty({ enum: STATUSES }) status!: McpServerStatus;
  @ApiProperty({ type: String, nullable: true }) status_error!: string | null;
  @ApiProperty() tool_count!: number;
}

export class McpResourceRecordDto implements McpResourceRecord {
  @ApiProperty({ example: 'demo://resource/static/document/architecture.md' }) uri!: string;
  @ApiProperty() name!: string;
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ example: 'text/markdown' }) mime_type?: string;
  @ApiPropertyOptional({ description: 'bytes, when the server says' }) size?: number;
}

export class McpServerResourcesResponseDto implements McpServerResourcesResponse {
  @ApiProperty() server!: string;
  @ApiProperty({ enum: STATUSES }) status!: McpServerStatus;
  @ApiProperty({ type: [McpResourceRecordDto] }) resources!: McpResourceRecordDto[];
  @ApiProperty({ description: 'true when the server had more resources than listed' }) truncated!: boolean;
}
