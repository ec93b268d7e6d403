import { API_PATHS } from '@cashcode/contracts';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Put, Query } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { ApprovalAuditResponse, ToolPoliciesResponse } from '@cashcode/contracts';
import { ApiProblemResponses, ProblemException } from '../common/problem-details';
import { AUDIT_DEFAULT_LIMIT, ApprovalAuditLog } from './approval-audit';
import { ToolPoliciesService } from './tool-policies.service';
import {
  ApprovalAuditResponseDto,
  ListApprovalAuditQueryDto,
  ToolPoliciesResponseDto,
  UpdateToolPoliciesDto,
} from './dto/tool-policies.dto';

const RULE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** `/api/settings/tool-policies`: which tools run, ask or are denied; the standing rules of "always allow". */
@ApiTags('approvals')
@Controller(API_PATHS.toolPolicies)
export class ToolPoliciesController {
  constructor(private readonly policies: ToolPoliciesService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the tool policies',
    description:
      'Defaults per risk class, explicit per-tool and per-MCP-server policies, the standing rules ("always allow") ' +
      'and the known tools with their effective policy. Precedence: tool policy > server policy > risk default; a ' +
      'standing rule or a loaded Skill turns `ask` into allow; `deny` is never overridden.',
  })
  @ApiOkResponse({ type: ToolPoliciesResponseDto })
  get(): ToolPoliciesResponse {
    return this.policies.policiesResponse();
  }

  @Put()
  @ApiOperation({
    summary: 'Change the tool policies',
    description:
      'Every field is optional: `defaults` changes the given risk classes, `tools` and `servers` replace the stored ' +
      'maps, `keep_rule_ids` deletes every standing rule not listed. Written atomically (0600) before the answer.',
  })
  @ApiBody({ type: UpdateToolPoliciesDto })
  @ApiOkResponse({ type: ToolPoliciesResponseDto })
  @ApiProblemResponses(422)
  put(@Body() body: UpdateToolPoliciesDto): Promise<ToolPoliciesResponse> {
    return this.policies.updatePolicies(body);
  }

  @Delete('rules/:id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a standing rule', description: 'The next matching call asks again. 404 for an unknown id.' })
  @ApiParam({ name: 'id', example: 'rule_0123456789abcdef' })
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiProblemResponses(404)
  async deleteRule(@Param('id') id: string): Promise<void> {
    if (!RULE_ID_PATTERN.test(id) || !(await this.policies.deleteRule(id))) {
      throw new ProblemException(HttpStatus.NOT_FOUND, `Standing rule not found: ${id.slice(0, 64)}`, { code: 'rule_not_found' });
    }
  }
}

/** `/api/approvals/audit`: every approval decision, newest first. */
@ApiTags('approvals')
@Controller(API_PATHS.approvals)
export class ApprovalAuditController {
  constructor(private readonly audit: ApprovalAuditLog) {}

  @Get('audit')
  @ApiOperation({
    summary: 'List the approval decisions, newest first',
    description:
      'One entry per decision (by the user, a policy or standing rule, the timeout or a cancel) with the redacted ' +
      'command or argument preview. Paged with `offset` and `limit`.',
  })
  @ApiOkResponse({ type: ApprovalAuditResponseDto })
  @ApiProblemResponses(422)
  list(@Query() query: ListApprovalAuditQueryDto): Promise<ApprovalAuditResponse> {
    return this.audit.list(query.offset ?? 0, query.limit ?? AUDIT_DEFAULT_LIMIT);
  }
}
