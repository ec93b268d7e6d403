import { API_PATHS, type SkillPreApprovals } from '@cashcode/contracts';
import { Body, Controller, Delete, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblemResponses } from '../common/problem-details';
import { GrantSkillPreApprovalsDto } from './dto/skill-requests.dto';
import { SkillPreApprovalsDto } from './dto/skill-responses.dto';
import { SkillGrantsService } from './skill-grants.service';

/**
 * `/api/skills/{name}/pre-approvals` — the owner's grant of a Skill's `allowed-tools` (openspec approvals
 * "Requirement: Skills pre-approve only with the owner's grant"). Owner-only REST: no model tool reaches it.
 */
@ApiTags('skills')
@Controller(API_PATHS.skills)
export class SkillGrantsController {
  constructor(private readonly grants: SkillGrantsService) {}

  @Post(':name/pre-approvals')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "Grant a Skill's pre-approvals",
    description:
      'Grants what the Skill\'s allowed-tools would pre-approve (`pre_approvals.summary`) for the package content ' +
      'whose hash is `hash` (`pre_approvals.hash` as shown). 409 `skill_grant_stale` (with the current `hash`) when ' +
      'the Skill changed since; 422 when it lists no allowed-tools. Any later change of the Skill drops the grant. ' +
      'Appended to the approvals audit.',
  })
  @ApiOkResponse({ type: SkillPreApprovalsDto })
  @ApiProblemResponses(404, 409, 422)
  grant(@Param('name') name: string, @Body() body: GrantSkillPreApprovalsDto): Promise<SkillPreApprovals> {
    return this.grants.grant(name, body.hash);
  }

  @Delete(':name/pre-approvals')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: "Revoke a Skill's pre-approvals",
    description: 'Its allowed-tools pre-approve nothing until granted again (no grant: nothing to do). Appended to the approvals audit.',
  })
  @ApiNoContentResponse()
  @ApiProblemResponses(404)
  async revoke(@Param('name') name: string): Promise<void> {
    await this.grants.revoke(name);
  }
}
