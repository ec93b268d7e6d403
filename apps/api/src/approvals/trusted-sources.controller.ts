import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsString, MaxLength, ValidateNested } from 'class-validator';
import {
  API_PATHS,
  TRUSTED_SOURCE_KINDS,
  type TrustedSource,
  type TrustedSourceKind,
  type TrustedSourcesResponse,
  type UpdateTrustedSourcesRequest,
} from '@cashcode/contracts';
import { ApiProblemResponses, ProblemException } from '../common/problem-details';
import { TrustedSourceStore } from './trusted-source-store';
import { MAX_TRUSTED_SOURCES, parseTrustedSource } from './trusted-sources';

class TrustedSourceDto implements TrustedSource {
  @ApiProperty({ enum: [...TRUSTED_SOURCE_KINDS], example: 'mcp_server' })
  @IsIn([...TRUSTED_SOURCE_KINDS])
  kind!: TrustedSourceKind;

  @ApiProperty({ example: 'my-notes', description: 'the MCP server name, the domain (lowercase) or the Skill name' })
  @IsString()
  @MaxLength(253)
  name!: string;
}

class TrustedSourcesDto implements UpdateTrustedSourcesRequest, TrustedSourcesResponse {
  @ApiProperty({ type: [TrustedSourceDto], maxItems: MAX_TRUSTED_SOURCES })
  @IsArray()
  @ArrayMaxSize(MAX_TRUSTED_SOURCES)
  @ValidateNested({ each: true })
  @Type(() => TrustedSourceDto)
  sources!: TrustedSourceDto[];
}

/** `/api/settings/trusted-sources`: the sources whose content no longer makes memory, Skill or automation writes ask. */
@ApiTags('approvals')
@Controller(API_PATHS.trustedSources)
export class TrustedSourcesController {
  constructor(private readonly store: TrustedSourceStore) {}

  @Get()
  @ApiOperation({
    summary: 'Read the trusted sources',
    description:
      'Sources the owner trusts: `mcp_server` (every tool and resource of that MCP server), `domain` (pages fetched ' +
      'from it or its subdomains), `skill` (that Skill\'s resource files). Content from them still reaches the model ' +
      'framed and is still recorded in the provenance log; it only no longer makes a memory, Skill or automation write ask.',
  })
  @ApiOkResponse({ type: TrustedSourcesDto })
  get(): TrustedSourcesResponse {
    return { sources: this.store.current };
  }

  @Put()
  @ApiOperation({
    summary: 'Replace the trusted sources',
    description:
      'Replaces the list (duplicates dropped). Each source added or removed is recorded in the approvals audit ' +
      '(`tool: trusted_sources`), then the list is written (0600) before the answer. 422 for an unknown kind or a name ' +
      'not of its kind\'s form (an MCP server name, a lowercase host name, a Skill name).',
  })
  @ApiBody({ type: TrustedSourcesDto })
  @ApiOkResponse({ type: TrustedSourcesDto })
  @ApiProblemResponses(422)
  async put(@Body() body: TrustedSourcesDto): Promise<TrustedSourcesResponse> {
    const sources: TrustedSource[] = [];
    for (const [index, raw] of body.sources.entries()) {
      const parsed = parseTrustedSource(raw);
      if (!parsed) {
        throw new ProblemException(422, `sources[${index}]: ${JSON.stringify(raw.name.slice(0, 80))} is not a valid ${raw.kind} name`, {
          code: 'trusted_source_invalid',
        });
      }
      sources.push(parsed);
    }
    return { sources: await this.store.replace(sources) };
  }
}
