import { API_PATHS } from '@cashcode/contracts';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  PayloadTooLargeException,
  Post,
  Put,
  Query,
  UploadedFile,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { type Observable, catchError, throwError } from 'rxjs';
import type {
  DeleteInvalidSkillResponse,
  SkillContentResponse,
  SkillDetail,
  SkillImportResponse,
  SkillListResponse,
  SkillRecord,
  SkillRecordWithPath,
  SkillReplaceResponse,
  SkillValidationResponse,
  SkillVersionsResponse,
} from '@cashcode/contracts';
import { ApiProblemResponses } from '../common/problem-details';
import { SKILL_PAGE_SIZE_DEFAULT, ListSkillsQueryDto } from './dto/list-skills-query.dto';
import { CreateSkillDto, ReplaceSkillDto, SetSkillEnabledDto, ValidateSkillDto } from './dto/skill-requests.dto';
import {
  DeleteInvalidSkillResponseDto,
  SkillContentResponseDto,
  SkillDetailDto,
  SkillListResponseDto,
  SkillRecordDto,
  SkillRecordWithPathDto,
  SkillReplaceResponseDto,
  SkillValidationResponseDto,
  SkillVersionsResponseDto,
} from './dto/skill-responses.dto';
import { ZIP_MAX_BYTES } from './skill-archive';
import { SKILL_MESSAGES, SkillError } from './skills.errors';
import { SkillGrantsService } from './skill-grants.service';
import type { UploadedZip } from './skill-import';
import { SkillsAdminService } from './skills-admin.service';

/**
 * Turns multer's size limit on the ZIP upload into the Skill validation error the original server answered (422,
 * `file`).
 */
@Injectable()
export class SkillUploadLimitInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) =>
        throwError(() =>
          error instanceof PayloadTooLargeException
            ? new SkillError('validation', SKILL_MESSAGES.zipTooLarge, 'file', { extensions: { reason: 'zip_too_large', limit: ZIP_MAX_BYTES } })
            : error,
        ),
      ),
    );
  }
}

function selectList(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  if (list.some((item) => typeof item !== 'string')) throw new SkillError('validation', SKILL_MESSAGES.selectInvalid, 'select');
  return (list as string[]).flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
}

function flag(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new SkillError('validation', SKILL_MESSAGES.replaceBuiltinInvalid, 'replace_builtin');
}

/**
 * `/api/skills` — the Skill market (openspec skills). SkillError is rendered as problem+json by the global filter.
 * Records carry `pre_approvals` (the owner's grant of the Skill's allowed-tools, SkillGrantsController); a create,
 * import, replace, rollback or delete drops the grant of the package it changed.
 */
@ApiTags('skills')
@Controller(API_PATHS.skills)
export class SkillsController {
  constructor(
    private readonly skills: SkillsAdminService,
    private readonly grants: SkillGrantsService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'List Skills',
    description:
      'The effective catalog sorted by name (or ranked by `query`, disabled Skills included), filtered and paged; ' +
      '`invalid` always holds every invalid package diagnostic.',
  })
  @ApiOkResponse({ type: SkillListResponseDto })
  @ApiProblemResponses(422)
  async list(@Query() query: ListSkillsQueryDto): Promise<SkillListResponse> {
    const page = await this.skills.list({
      source: query.source,
      enabled: query.enabled,
      availability: query.availability,
      query: query.query,
      page: query.page ?? 1,
      pageSize: query.page_size ?? SKILL_PAGE_SIZE_DEFAULT,
    });
    const items: SkillRecord[] = [];
    for (const item of page.items) items.push(await this.grants.decorate(item));
    return { ...page, items };
  }

  @Post()
  @ApiOperation({ summary: 'Create a Skill', description: 'Validated, built in a hidden directory and published atomically.' })
  @ApiCreatedResponse({ type: SkillRecordWithPathDto })
  @ApiProblemResponses(403, 409, 422)
  async create(@Body() body: CreateSkillDto): Promise<SkillRecordWithPath> {
    const record = await this.skills.create({
      name: body.name,
      content: body.content,
      source: body.source ?? 'user',
      supportFiles: body.support_files,
      enabled: body.enabled,
    });
    await this.grants.contentChanged(record.source, record.name);
    return this.grants.decorate(record);
  }

  @Post('import')
  @UseInterceptors(
    SkillUploadLimitInterceptor,
    FileInterceptor('file', { limits: { fileSize: ZIP_MAX_BYTES, files: 1, fields: 8, parts: 16 } }),
  )
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      properties: {
        file: { type: 'string', format: 'binary' },
        select: { type: 'array', items: { type: 'string' }, description: 'as the query parameter' },
        replace_builtin: { type: 'string', enum: ['true', 'false'], description: 'as the query parameter' },
      },
      required: ['file'],
    },
  })
  @ApiQuery({
    name: 'select',
    required: false,
    isArray: true,
    type: String,
    description: 'name of a Skill to import from an archive holding several (repeat for more; all or none are imported)',
  })
  @ApiQuery({
    name: 'replace_builtin',
    required: false,
    enum: ['true', 'false'],
    description: 'import a Skill named like a built-in: it shadows the built-in until it is deleted',
  })
  @ApiOperation({
    summary: 'Import a Skill ZIP',
    description:
      'Multipart field `file` (.zip or .skill, ≤ 10 MiB); always into the user root, enabled. Nothing is executed. ' +
      'An archive holding several Skills answers 422 `skill_archive_multiple` listing them in `skills` until `select` ' +
      'names the ones to import; a built-in of the same name answers 409 with `replace_builtin: true` until ' +
      '`replace_builtin=true` is sent.',
  })
  @ApiCreatedResponse({ type: SkillRecordDto })
  @ApiProblemResponses(409, 422)
  async importZip(
    @UploadedFile() file: UploadedZip | undefined,
    @Query('select') querySelect?: unknown,
    @Query('replace_builtin') queryReplace?: unknown,
    @Body() body?: Record<string, unknown>,
  ): Promise<SkillImportResponse> {
    const select = [...selectList(querySelect), ...selectList(body?.['select'])];
    const replaceBuiltin = flag(queryReplace) || flag(body?.['replace_builtin']);
    const result = await this.skills.importZip(file, { select, replaceBuiltin });
    // a re-import is new content: it has no grant until the owner allows what the import dialog shows
    const imported: SkillRecord[] = [];
    for (const record of result.imported) {
      await this.grants.contentChanged(record.source, record.name);
      imported.push(await this.grants.decorate(record));
    }
    return { ...(await this.grants.decorate(result)), imported };
  }

  @Delete('invalid/:source/:directory')
  @ApiOperation({
    summary: 'Delete an invalid package',
    description: 'Moves it to skill-snapshots/invalid/<source>/<package id>/<version>.',
  })
  @ApiOkResponse({ type: DeleteInvalidSkillResponseDto })
  @ApiProblemResponses(403, 404, 409, 422)
  deleteInvalid(
    @Param('source') source: string,
    @Param('directory') directory: string,
  ): Promise<DeleteInvalidSkillResponse> {
    return this.skills.deleteInvalid(source, directory);
  }

  @Get(':name')
  @ApiOperation({ summary: 'Get a Skill', description: 'Record, body preview (4000 chars) and versions.' })
  @ApiOkResponse({ type: SkillDetailDto })
  @ApiProblemResponses(404)
  async get(@Param('name') name: string): Promise<SkillDetail> {
    return this.grants.decorate(await this.skills.get(name));
  }

  @Get(':name/content')
  @ApiOperation({ summary: 'Get SKILL.md', description: 'The full SKILL.md with its hash (send it back as expected_hash).' })
  @ApiOkResponse({ type: SkillContentResponseDto })
  @ApiProblemResponses(404, 422)
  content(@Param('name') name: string): Promise<SkillContentResponse> {
    return this.skills.content(name);
  }

  @Post(':name/validate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Validate a Skill',
    description: 'Validates the package on disk, or the draft SKILL.md in `content`.',
  })
  @ApiOkResponse({ type: SkillValidationResponseDto })
  @ApiProblemResponses(404)
  validate(@Param('name') name: string, @Body() body: ValidateSkillDto): Promise<SkillValidationResponse> {
    return this.skills.validate(name, body?.content);
  }

  @Put(':name')
  @ApiOperation({
    summary: 'Replace a Skill',
    description: 'Checks expected_hash (409), validates (422; no snapshot), snapshots, then replaces atomically.',
  })
  @ApiOkResponse({ type: SkillReplaceResponseDto })
  @ApiProblemResponses(403, 404, 409, 422)
  async replace(@Param('name') name: string, @Body() body: ReplaceSkillDto): Promise<SkillReplaceResponse> {
    const record = await this.skills.replace(name, {
      content: body.content,
      supportFiles: body.support_files,
      expectedHash: body.expected_hash,
    });
    await this.grants.contentChanged(record.source, record.name);
    return this.grants.decorate(record);
  }

  @Patch(':name/enabled')
  @ApiOperation({ summary: 'Enable or disable a Skill' })
  @ApiOkResponse({ type: SkillRecordWithPathDto })
  @ApiProblemResponses(403, 404, 422)
  async setEnabled(@Param('name') name: string, @Body() body: SetSkillEnabledDto): Promise<SkillRecordWithPath> {
    return this.grants.decorate(await this.skills.setEnabled(name, body.enabled));
  }

  @Delete(':name')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a Skill', description: 'Snapshot, then remove; a lower-precedence package becomes effective.' })
  @ApiNoContentResponse()
  @ApiProblemResponses(403, 404)
  async delete(@Param('name') name: string): Promise<void> {
    const source = await this.grants.effectiveSource(name);
    await this.skills.delete(name);
    if (source !== null) await this.grants.contentChanged(source, name, 'deleted');
  }

  @Get(':name/versions')
  @ApiOperation({ summary: 'List snapshots', description: 'Newest first; built-in Skills have none.' })
  @ApiOkResponse({ type: SkillVersionsResponseDto })
  @ApiProblemResponses(404)
  versions(@Param('name') name: string): Promise<SkillVersionsResponse> {
    return this.skills.versions(name);
  }

  @Post(':name/rollback/:version')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Roll back to a snapshot', description: 'Snapshots the current package first.' })
  @ApiOkResponse({ type: SkillRecordWithPathDto })
  @ApiProblemResponses(403, 404, 422)
  async rollback(@Param('name') name: string, @Param('version') version: string): Promise<SkillRecordWithPath> {
    const record = await this.skills.rollback(name, version);
    await this.grants.contentChanged(record.source, record.name);
    return this.grants.decorate(record);
  }
}
