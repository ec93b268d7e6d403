import { API_PATHS } from '@cashcode/contracts';
import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import {
  SkillEvolutionProposalDetailDto,
  SkillEvolutionProposalDto,
  SkillEvolutionProposalListDto,
} from './dto/proposal-responses.dto';
import { EvolutionService } from './evolution.service';

const ID_PARAM = { name: 'id', description: 'proposal id (32 hex)', example: '0f8fad5bd9cb469fa16570867728950e' };

/**
 * Review of Skill proposals generated from recurring work (openspec skill-evolution). Proposals are never applied
 * automatically.
 */
@ApiTags('skill-evolution')
@Controller(API_PATHS.skillEvolutionProposals)
export class EvolutionController {
  constructor(private readonly evolution: EvolutionService) {}

  @Get()
  @ApiOperation({
    summary: 'List Skill proposals, newest first',
    description: '`enabled` tells whether new turns are collected as evidence (SKILL_EVOLUTION_ENABLED).',
  })
  @ApiOkResponse({ type: SkillEvolutionProposalListDto })
  list(): Promise<SkillEvolutionProposalListDto> {
    return this.evolution.list();
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Read one proposal with its evidence and a diff against the current Skill',
    description: '404 `proposal not found`. `stale` is true when approving would be refused because the Skill changed.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: SkillEvolutionProposalDetailDto })
  @ApiProblemResponses(404)
  get(@Param('id') id: string): Promise<SkillEvolutionProposalDetailDto> {
    return this.evolution.get(id);
  }

  @Post(':id/approve')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Approve a pending proposal: create or update the agent Skill',
    description:
      'Re-checks at approval time: 409 `proposal is not pending`; 422 `proposal candidate is invalid` (with ' +
      '`errors`); create → a new enabled agent Skill (409 when the name exists in any root); update → replaces the ' +
      'agent Skill after a snapshot (403 `evolution can modify only agent Skills`, 409 when its hash is no longer the ' +
      "proposal's base hash). `applied_version` records the snapshot (update) or the new version (create).",
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: SkillEvolutionProposalDto })
  @ApiProblemResponses(403, 404, 409, 422, 503)
  approve(@Param('id') id: string): Promise<SkillEvolutionProposalDto> {
    return this.evolution.approve(id);
  }

  @Post(':id/reject')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Reject a pending proposal', description: '409 `proposal is not pending`.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: SkillEvolutionProposalDto })
  @ApiProblemResponses(404, 409)
  reject(@Param('id') id: string): Promise<SkillEvolutionProposalDto> {
    return this.evolution.reject(id);
  }
}
