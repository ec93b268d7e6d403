import { API_PATHS } from '@cashcode/contracts';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { ExecSandboxStatus } from '@cashcode/contracts';
import { ExecSandboxStatusDto } from './exec-sandbox.dto';
import { ExecSandboxService } from './exec-sandbox.service';

/** `GET /api/settings/exec-sandbox`: whether exec runs confined (read-only; the mode is set by the environment). */
@ApiTags('exec-sandbox')
@Controller(API_PATHS.execSandbox)
export class ExecSandboxController {
  constructor(private readonly sandbox: ExecSandboxService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the exec sandbox state',
    description:
      'The configured CASHCODE_EXEC_SANDBOX mode, whether exec commands run confined in bubblewrap, whether they ' +
      'reach the network, and why the sandbox is not active. Decided once at start.',
  })
  @ApiOkResponse({ type: ExecSandboxStatusDto })
  getStatus(): ExecSandboxStatus {
    return this.sandbox.status();
  }
}
