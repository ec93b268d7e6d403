import { API_PATHS } from '@cashcode/contracts';
import type { ClientConfigResponse, HealthResponse } from '@cashcode/contracts';
import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { BrowserService } from '../agent/browser/browser.service';
import { BrowserStatusDto } from '../agent/browser/browser-status.dto';
import { ExecSandboxStatusDto } from '../agent/sandbox/exec-sandbox.dto';
import { ExecSandboxService } from '../agent/sandbox/exec-sandbox.service';
import { WS_SHARED_PATH } from '../common/cashcode-ws-adapter';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export class HealthResponseDto implements HealthResponse {
  @ApiProperty({ example: 'ok', enum: ['ok'] })
  status!: 'ok';

  @ApiProperty({ example: 'cashcode', enum: ['cashcode'] })
  service!: 'cashcode';

  @ApiProperty({ type: ExecSandboxStatusDto, description: 'whether exec commands run confined (additive)' })
  exec_sandbox!: ExecSandboxStatusDto;

  @ApiProperty({ type: BrowserStatusDto, description: 'whether the browser tool is offered (additive)' })
  browser!: BrowserStatusDto;
}

export class ClientConfigResponseDto implements ClientConfigResponse {
  @ApiProperty({ example: 8765, description: "the WebSocket gateway's port (the HTTP port when shared)" })
  ws_port!: number;

  @ApiProperty({ example: '/', description: '`/ws` when the gateway shares the HTTP server, else `/`' })
  ws_path!: string;

  @ApiProperty({
    example: true,
    description: 'REST needs `Authorization: Bearer <token>` (the WS `?token=<token>`) or the session cookie; false only with CASHCODE_AUTH=off',
  })
  token_required!: boolean;
}

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: ExecSandboxService,
    private readonly browser: BrowserService,
  ) {}

  @Get(API_PATHS.health)
  @ApiOperation({ summary: 'Liveness probe' })
  @ApiOkResponse({ type: HealthResponseDto })
  health(): HealthResponseDto {
    return { status: 'ok', service: 'cashcode', exec_sandbox: this.sandbox.status(), browser: this.browser.status() };
  }

  @Get(API_PATHS.clientConfig)
  @ApiOperation({
    summary: 'Where the console finds the WebSocket gateway',
    description: 'Needs no token; the host is the one the page was loaded from.',
  })
  @ApiOkResponse({ type: ClientConfigResponseDto })
  clientConfig(): ClientConfigResponseDto {
    return {
      ws_port: this.config.wsPort,
      ws_path: this.config.wsSharesHttp ? WS_SHARED_PATH : '/',
      token_required: this.config.apiToken !== null,
    };
  }
}
