/** OpenAPI shapes of the /api/skill-evolution responses; each implements its @cashcode/contracts interface. */
import { ApiProperty } from '@nestjs/swagger';
import {
  LLM_PROVIDERS,
  SKILL_EVOLUTION_ACTIONS,
  SKILL_EVOLUTION_STATUSES,
  SKILL_SOURCES,
  type LlmProvider,
  type LlmSelection,
  type SkillEvolutionAction,
  type SkillEvolutionCurrentSkill,
  type SkillEvolutionEvidence,
  type SkillEvolutionProposal,
  type SkillEvolutionProposalDetail,
  type SkillEvolutionProposalList,
  type SkillEvolutionStatus,
  type SkillEvolutionToolCall,
  type SkillEvolutionValidation,
  type SkillSource,
} from '@cashcode/contracts';

export class ProposalValidationDto implements SkillEvolutionValidation {
  @ApiProperty({ description: 'the candidate passes the SKILL.md rules with the proposal name as package name' })
  valid!: boolean;

  @ApiProperty({ type: [String], example: [], description: 'validation messages of the SKILL.md rules' })
  errors!: string[];
}

export class ProposalModelDto implements LlmSelection {
  @ApiProperty({ enum: LLM_PROVIDERS })
  provider!: LlmProvider;

  @ApiProperty({ example: 'deepseek-chat' })
  model!: string;
}

export class SkillEvolutionProposalDto implements SkillEvolutionProposal {
  @ApiProperty({ example: '0f8fad5bd9cb469fa16570867728950e', description: '32 hex' })
  id!: string;

  @ApiProperty({ enum: SKILL_EVOLUTION_ACTIONS })
  action!: SkillEvolutionAction;

  @ApiProperty({ example: 'weekly-report', description: 'the Skill to create or update (always an agent Skill)' })
  name!: string;

  @ApiProperty({ description: 'the full proposed SKILL.md' })
  candidate_content!: string;

  @ApiProperty({ example: 'Reusable workflow evidence' })
  reason!: string;

  @ApiProperty({ type: [String], example: ['1785052800000-9f86d081'], description: 'evidence the proposal came from' })
  evidence_ids!: string[];

  @ApiProperty({ type: String, nullable: true, description: 'hash of the agent Skill an update is based on; null for create' })
  base_hash!: string | null;

  @ApiProperty({ enum: SKILL_EVOLUTION_STATUSES })
  status!: SkillEvolutionStatus;

  @ApiProperty({ type: ProposalValidationDto })
  validation!: ProposalValidationDto;

  @ApiProperty({ example: '2026-07-26T04:00:00.000Z' })
  created_at!: string;

  @ApiProperty({ example: '2026-07-26T04:05:00.000Z' })
  updated_at!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '1785053100000-1a2b3c4d',
    description:
      'null until applied; then for an update the snapshot id of the previous package (rollback point), for a ' +
      'create the new Skill\'s manifest version',
  })
  applied_version!: string | null;

  @ApiProperty({ example: '3f2b9c1d0e8a4b7c9d6e5f4a', description: 'workflow fingerprint (24 hex)' })
  fingerprint!: string;

  @ApiProperty({ type: ProposalModelDto, nullable: true, description: 'the model that generated the proposal' })
  model!: ProposalModelDto | null;
}

export class SkillEvolutionProposalListDto implements SkillEvolutionProposalList {
  @ApiProperty({ description: 'SKILL_EVOLUTION_ENABLED: whether new turns are collected as evidence' })
  enabled!: boolean;

  @ApiProperty({ type: [SkillEvolutionProposalDto], description: 'newest first' })
  items!: SkillEvolutionProposalDto[];
}

export class EvidenceToolCallDto implements SkillEvolutionToolCall {
  @ApiProperty({ example: 'read_file' })
  name!: string;

  @ApiProperty({ example: '{"path":"notes.md"}', description: 'redacted, at most 300 characters' })
  arguments!: string;
}

export class SkillEvolutionEvidenceDto implements SkillEvolutionEvidence {
  @ApiProperty({ example: '1785052800000-9f86d081' })
  id!: string;

  @ApiProperty({ example: '3f2b9c1d0e8a4b7c9d6e5f4a' })
  fingerprint!: string;

  @ApiProperty({ example: '5d41402abc4b', description: 'first 12 hex of sha256(chat id)' })
  chat_id_hash!: string;

  @ApiProperty({ description: "the user's request (redacted, ≤ 2000 chars)" })
  user!: string;

  @ApiProperty({ description: 'the final answer (redacted, ≤ 2500 chars)' })
  assistant!: string;

  @ApiProperty({ type: [String], description: 'tool names as called' })
  tools!: string[];

  @ApiProperty({ type: [EvidenceToolCallDto] })
  tool_calls!: EvidenceToolCallDto[];

  @ApiProperty({ type: [String], description: 'persisted tool results (redacted, ≤ 500 chars each)' })
  tool_receipts!: string[];

  @ApiProperty({ example: '2026-07-26T04:00:00.000Z' })
  created_at!: string;
}

export class CurrentSkillDto implements SkillEvolutionCurrentSkill {
  @ApiProperty({ example: 'weekly-report' })
  name!: string;

  @ApiProperty({ enum: SKILL_SOURCES })
  source!: SkillSource;

  @ApiProperty({ description: 'sha256 of the current SKILL.md' })
  hash!: string;

  @ApiProperty({ description: 'the current SKILL.md' })
  content!: string;
}

export class SkillEvolutionProposalDetailDto extends SkillEvolutionProposalDto implements SkillEvolutionProposalDetail {
  @ApiProperty({ type: [SkillEvolutionEvidenceDto], description: 'the evidence records that still exist' })
  evidence!: SkillEvolutionEvidenceDto[];

  @ApiProperty({ type: CurrentSkillDto, nullable: true, description: 'the Skill of that name now, if any' })
  current!: CurrentSkillDto | null;

  @ApiProperty({ type: String, nullable: true, description: 'unified diff current → candidate; null without a current Skill' })
  diff!: string | null;

  @ApiProperty({ description: 'approving will be refused because the Skill changed since the proposal was made' })
  stale!: boolean;
}
