import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import {
  SKILL_SOURCES,
  type CreateSkillRequest,
  type GrantSkillPreApprovalsRequest,
  type ReplaceSkillRequest,
  type SetSkillEnabledRequest,
  type SkillSource,
} from '@cashcode/contracts';

const SUPPORT_FILES_DOC = {
  type: 'object',
  additionalProperties: { type: 'string' },
  example: { 'references/guide.md': '# Guide' },
  description:
    'package-relative path → UTF-8 text (at most 64 files of 200,000 bytes; not SKILL.md or _meta.json; any folder, ' +
    'e.g. references/, templates/, scripts/, assets/, or root files such as LICENSE.txt)',
} as const;

/** Body of `POST /api/skills`. Name and content rules are applied by SkillsAdminService. */
export class CreateSkillDto implements CreateSkillRequest {
  @ApiProperty({ example: 'weather', description: '^[a-z0-9][a-z0-9._-]{0,63}$; equals the frontmatter name' })
  @IsString({ message: 'name must be a string' })
  name!: string;

  @ApiProperty({ description: 'the full SKILL.md (YAML frontmatter + body)' })
  @IsString({ message: 'content must be a string' })
  content!: string;

  @ApiPropertyOptional({ enum: SKILL_SOURCES, default: 'user', description: '`builtin` → 403' })
  @IsOptional()
  @IsIn(SKILL_SOURCES, { message: `source must be one of ${SKILL_SOURCES.join(', ')}` })
  source?: SkillSource;

  @ApiPropertyOptional(SUPPORT_FILES_DOC)
  @IsOptional()
  @IsObject({ message: 'support_files must be an object' })
  support_files?: Record<string, string>;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be a boolean' })
  enabled?: boolean;
}

/** Body of `PUT /api/skills/{name}`. */
export class ReplaceSkillDto implements ReplaceSkillRequest {
  @ApiProperty({ description: 'the full new SKILL.md' })
  @IsString({ message: 'content must be a string' })
  content!: string;

  @ApiPropertyOptional({
    ...SUPPORT_FILES_DOC,
    nullable: true,
    description: 'null/absent → every other file is kept byte-for-byte; an object → the package is rebuilt with only these files',
  })
  @IsOptional()
  @ValidateIf((_object, value) => value !== null)
  @IsObject({ message: 'support_files must be an object or null' })
  support_files?: Record<string, string> | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'the hash read with the content; a different current hash → 409' })
  @IsOptional()
  @ValidateIf((_object, value) => value !== null)
  @IsString({ message: 'expected_hash must be a string or null' })
  expected_hash?: string | null;
}

/** Body of `PATCH /api/skills/{name}/enabled`. */
export class SetSkillEnabledDto implements SetSkillEnabledRequest {
  @ApiProperty()
  @IsBoolean({ message: 'enabled must be a boolean' })
  enabled!: boolean;
}

/** Optional body of `POST /api/skills/{name}/validate`: a draft SKILL.md to check instead of the package on disk. */
export class ValidateSkillDto {
  @ApiPropertyOptional({ description: 'a draft SKILL.md for this Skill; absent → the package on disk is validated' })
  @IsOptional()
  @IsString({ message: 'content must be a string' })
  content?: string;
}

/** Body of `POST /api/skills/{name}/pre-approvals`. */
export class GrantSkillPreApprovalsDto implements GrantSkillPreApprovalsRequest {
  @ApiProperty({
    example: 'a3f1…',
    description: 'pre_approvals.hash as shown to the owner (64 hex); another hash than the current content → 409',
  })
  @IsString({ message: 'hash must be a string' })
  @Matches(/^[0-9a-f]{64}$/, { message: 'hash must be the 64-character package hash shown with the Skill (pre_approvals.hash)' })
  hash!: string;
}
