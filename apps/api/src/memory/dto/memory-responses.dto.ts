/** OpenAPI shapes of the /api/memory responses; each implements its @cashcode/contracts interface. */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  LLM_PROVIDERS,
  type DreamEntryProvenance,
  type DreamOutcome,
  type DreamRun,
  type DreamRunListResponse,
  type DreamTrigger,
  type DreamTriggerResponse,
  type LlmProvider,
  type LlmSelection,
  type MemoryDocumentResponse,
  type MemoryEntryTrust,
  type SoulDocumentResponse,
} from '@cashcode/contracts';
import { UntrustedSourceDto } from './memory-provenance.dto';

export class MemoryDocumentResponseDto implements MemoryDocumentResponse {
  @ApiProperty({ example: '# Preferences\n- The user prefers metric units\n', description: "the file's text ('' when missing)" })
  content!: string;

  @ApiProperty({
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    description: 'sha256 of `content` (UTF-8), lowercase hex; send it back with PUT',
  })
  hash!: string;
}

export class SoulDocumentResponseDto extends MemoryDocumentResponseDto implements SoulDocumentResponse {
  @ApiProperty({ description: 'SOUL.md is missing or blank, so the built-in persona is used' })
  uses_default!: boolean;

  @ApiProperty({ description: 'the built-in persona' })
  default_content!: string;
}

export class DreamModelDto implements LlmSelection {
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;

  @ApiProperty({ example: 'deepseek-chat' })
  model!: string;
}

const OUTCOMES: DreamOutcome[] = ['updated', 'unchanged', 'rejected', 'failed', 'reverted', 'held'];
const TRIGGERS: DreamTrigger[] = ['schedule', 'manual', 'revert', 'apply'];

class DreamEntryProvenanceDto implements DreamEntryProvenance {
  @ApiProperty({ example: '- Lives in Berlin' }) entry!: string;
  @ApiProperty({ enum: ['added', 'removed', 'kept_unpromoted'] }) change!: 'added' | 'removed' | 'kept_unpromoted';
  @ApiProperty({ enum: ['unknown', 'untrusted', 'trusted', 'verified'] }) trust!: MemoryEntryTrust;
  @ApiProperty({ type: [UntrustedSourceDto] }) untrusted_sources!: UntrustedSourceDto[];
}

export class DreamRunDto implements DreamRun {
  @ApiProperty({ example: '1785052800000-9f86d081', description: '`<epoch ms>-<8 hex>`' })
  id!: string;

  @ApiProperty({ enum: TRIGGERS })
  trigger!: DreamTrigger;

  @ApiProperty({ example: '2026-07-26T04:00:00.000Z' })
  started_at!: string;

  @ApiProperty({ example: '2026-07-26T04:00:03.512Z' })
  finished_at!: string;

  @ApiProperty({
    enum: OUTCOMES,
    description:
      'updated: MEMORY.md rewritten (snapshot kept); unchanged: nothing to write; rejected: the rewrite would drop more ' +
      'than half of the entries (nothing written); failed: model error/timeout or MEMORY.md edited meanwhile (nothing ' +
      'written, cursor kept); reverted: a snapshot was restored; held: the rewrite would drop or change verified ' +
      'entries (nothing written, the proposal waits for POST …/apply)',
  })
  outcome!: DreamOutcome;

  @ApiProperty({ type: String, nullable: true, description: 'why the run failed or was rejected, or what it reverted' })
  detail!: string | null;

  @ApiProperty({ type: DreamModelDto, nullable: true })
  model!: DreamModelDto | null;

  @ApiProperty({ enum: ['background', 'last_turn'], nullable: true, description: 'where the model choice came from' })
  model_source!: 'background' | 'last_turn' | null;

  @ApiProperty({ example: 12, description: 'history records given to the model' })
  records_read!: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { 'chat-1': 42 },
    description: 'chats whose Dream cursor advanced, with the new cursor',
  })
  cursors!: Record<string, number>;

  @ApiProperty({ example: 8, description: 'entries (non-blank, non-heading lines) of MEMORY.md before the run' })
  entries_before!: number;

  @ApiProperty({ example: 9, description: 'entries after the run (proposed, for a rejected run)' })
  entries_after!: number;

  @ApiProperty({
    example: '--- MEMORY.md (before)\n+++ MEMORY.md (after)\n@@ -1,1 +1,2 @@\n # Facts\n+- The user lives in Berlin\n',
    description: "unified diff of MEMORY.md (the proposed change for a rejected run); '' when none",
  })
  diff!: string;

  @ApiProperty({ description: 'a snapshot from before this run exists, so POST …/revert can restore it' })
  revertible!: boolean;

  @ApiPropertyOptional({ description: 'revert runs: the run whose snapshot was restored' })
  reverted_run_id?: string;

  @ApiPropertyOptional({
    type: [DreamEntryProvenanceDto],
    description: 'where the entries the diff adds or removes came from, and the unverified untrusted entries kept out',
  })
  provenance?: DreamEntryProvenanceDto[];

  @ApiPropertyOptional({ type: [String], description: 'held runs: the verified entries the proposal would drop or change' })
  verified_dropped?: string[];

  @ApiPropertyOptional({ description: 'apply runs: the held run whose proposal was written' })
  applied_run_id?: string;
}

export class DreamRunListResponseDto implements DreamRunListResponse {
  @ApiProperty({ type: [DreamRunDto], description: 'newest first' })
  runs!: DreamRunDto[];
}

export class DreamTriggerResponseDto implements DreamTriggerResponse {
  @ApiProperty({ description: 'false when there was nothing to do' })
  ran!: boolean;

  @ApiProperty({ enum: ['no_new_records', 'no_model'], nullable: true, description: 'why nothing ran' })
  reason!: 'no_new_records' | 'no_model' | null;

  @ApiProperty({ type: DreamRunDto, nullable: true, description: 'the recorded run when `ran` is true' })
  run!: DreamRunDto | null;
}
