/** OpenAPI shapes of `GET /api/memory/provenance`; each implements its @cashcode/contracts interface. */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import {
  UNTRUSTED_SOURCE_KINDS,
  type MemoryEntriesResponse,
  type MemoryEntryTrust,
  type MemoryEntryView,
  type MemoryProvenanceRecord,
  type MemoryProvenanceResponse,
  type MemoryRequester,
  type MemoryWriteOrigin,
  type UntrustedSource,
  type UntrustedSourceKind,
  type VerifyMemoryEntryRequest,
} from '@cashcode/contracts';
import { PROVENANCE_DEFAULT_LIMIT, PROVENANCE_MAX_LIMIT } from '../memory-provenance';

/** Query of `GET /api/memory/provenance`. */
export class ListProvenanceQueryDto {
  @ApiPropertyOptional({ description: 'records to skip (oldest first)', minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'offset must be an integer' })
  @Min(0, { message: 'offset must be 0 or more' })
  offset?: number;

  @ApiPropertyOptional({ description: 'most records to return', minimum: 1, maximum: PROVENANCE_MAX_LIMIT, default: PROVENANCE_DEFAULT_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${PROVENANCE_MAX_LIMIT}` })
  @Max(PROVENANCE_MAX_LIMIT, { message: `limit must be between 1 and ${PROVENANCE_MAX_LIMIT}` })
  limit?: number;
}

export class UntrustedSourceDto implements UntrustedSource {
  @ApiProperty({ enum: UNTRUSTED_SOURCE_KINDS }) kind!: UntrustedSourceKind;
  @ApiProperty({ example: 'https://example.com/page', description: 'the URL, query, `<server>/<tool>` or `<skill>/<path>`' })
  name!: string;
}

export class MemoryProvenanceRecordDto implements MemoryProvenanceRecord {
  @ApiProperty({ example: '2026-07-26T10:15:00.000+02:00' }) at!: string;
  @ApiProperty({ enum: ['save_memory', 'dream', 'console'] }) origin!: MemoryWriteOrigin;
  @ApiProperty({ enum: ['owner', 'api', 'server'] }) requested_by!: MemoryRequester;
  @ApiProperty({ example: '[2026-07-26 10:15] The user prefers metric units' }) entry!: string;
  @ApiPropertyOptional() chat_id?: string;
  @ApiPropertyOptional() turn_id?: string;
  @ApiPropertyOptional() dream_run_id?: string;
  @ApiProperty({ type: [UntrustedSourceDto], description: 'untrusted content in the model context; empty: none' })
  untrusted_sources!: UntrustedSourceDto[];
  @ApiPropertyOptional({ description: 'the write ran after an approval' }) approved?: boolean;
  @ApiPropertyOptional({ description: "the owner's mark that the entry is verified (not a write)" }) verified?: boolean;
}

/** Body of `POST /api/memory/provenance/verify`. */
export class VerifyMemoryEntryDto implements VerifyMemoryEntryRequest {
  @ApiProperty({ example: '- The user prefers metric units', description: 'the line as MEMORY.md has it', maxLength: 10_000 })
  @IsString({ message: 'entry must be a string' })
  @MaxLength(10_000, { message: 'entry must be at most 10000 characters' })
  entry!: string;
}

export class MemoryProvenanceResponseDto implements MemoryProvenanceResponse {
  @ApiProperty({ type: [MemoryProvenanceRecordDto] }) records!: MemoryProvenanceRecordDto[];
  @ApiProperty() total!: number;
  @ApiProperty() offset!: number;
  @ApiProperty() limit!: number;
  @ApiProperty({ description: 'lines of the log that could not be read (skipped)' }) unreadable!: number;
}

export class MemoryEntryViewDto implements MemoryEntryView {
  @ApiProperty({ description: '1-based line number in MEMORY.md' }) line!: number;
  @ApiProperty({ example: '- Prefers green tea' }) entry!: string;
  @ApiProperty({ enum: ['unknown', 'untrusted', 'trusted', 'verified'] }) trust!: MemoryEntryTrust;
  @ApiProperty({ type: [UntrustedSourceDto] }) untrusted_sources!: UntrustedSourceDto[];
  @ApiPropertyOptional({ type: MemoryProvenanceRecordDto, description: 'the latest write of the line; absent: unknown source' })
  record?: MemoryProvenanceRecordDto;
}

export class MemoryEntriesResponseDto implements MemoryEntriesResponse {
  @ApiProperty({ type: [MemoryEntryViewDto] }) entries!: MemoryEntryViewDto[];
  @ApiProperty() total!: number;
  @ApiProperty() offset!: number;
  @ApiProperty() limit!: number;
  @ApiProperty({ example: { verified: 1, trusted: 10, untrusted: 2, unknown: 0 } }) counts!: Record<MemoryEntryTrust, number>;
  @ApiProperty({ description: 'lines of the provenance log that could not be read' }) unreadable!: number;
}
