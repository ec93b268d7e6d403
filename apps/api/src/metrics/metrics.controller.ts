import { API_PATHS } from '@cashcode/contracts';
import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { MetricsService } from './metrics.service';

/**
 * `GET /metrics`: the Prometheus scrape endpoint (openspec metrics). Outside `/api` like Prometheus expects, but behind
 * the API token like every route (the token guard and the console treat `/metrics` as an API path: request-path.ts).
 */
@ApiTags('metrics')
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get(API_PATHS.metrics)
  @ApiOperation({
    summary: 'Operator metrics (Prometheus text format)',
    description:
      'Turns by outcome, model calls and tokens by provider/model/purpose/outcome, tool calls by tool and outcome, ' +
      'approval decisions, MCP servers by connection state, turn and model-call latency histograms, WebSocket ' +
      'connections, and the process metrics, every name prefixed `cashcode_`. Labels never carry chat ids or user text. ' +
      'Needs the API token when the server has one.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'The Prometheus text exposition format 0.0.4',
    content: { 'text/plain': { schema: { type: 'string', example: 'cashcode_turns_total{outcome="ok"} 3\n' } } },
  })
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    const text = await this.metrics.render();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    return text;
  }
}
