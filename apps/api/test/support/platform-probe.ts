import { Body, Controller, Get, Logger, Module, Param, Post, type DynamicModule } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { type OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import type { WebSocket } from 'ws';
import { ApiProblemResponses } from '../../src/common/problem-details';
import type { AppConfig } from '../../src/config/app-config';
import { ConfigModule } from '../../src/config/config.module';
import { HealthModule } from '../../src/health/health.module';

export class ProbeItemDto {
  @ApiProperty()
  @IsString()
  @MinLength(1)
  name!: string;

  @ApiProperty()
  @IsInt()
  @Min(0)
  @Max(10)
  count!: number;
}

/** Routes that exercise the platform only (validation, errors, route templates) — independent of feature modules. */
@ApiTags('probe')
@Controller('api/probe')
export class ProbeController {
  @Post('items')
  @ApiOperation({ summary: 'validated body' })
  @ApiProblemResponses(422)
  create(@Body() body: ProbeItemDto): { name: string; count: number } {
    return { name: body.name, count: body.count };
  }

  @Get('items/:id')
  @ApiOperation({ summary: 'route template' })
  get(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('deep-log')
  @ApiOperation({ summary: 'logs after awaiting, without knowing the request' })
  async deepLog(): Promise<{ logged: true }> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.resolve();
    new Logger('ProbeService').log('event=probe.deep_log');
    return { logged: true };
  }

  @Get('boom')
  @ApiOperation({ summary: 'unexpected error' })
  boom(): never {
    throw new Error('leaked sk-abcdefghijklmnop at /home/user/secret/path');
  }
}

/** A gateway on the adapter's endpoint: greets each connection and echoes text frames. */
@WebSocketGateway()
export class ProbeGateway implements OnGatewayConnection {
  handleConnection(client: WebSocket): void {
    client.send(JSON.stringify({ event: 'hello' }));
    client.on('message', (data) => client.send(JSON.stringify({ event: 'echo', bytes: (data as Buffer).length })));
  }
}

@Module({})
export class PlatformProbeModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: PlatformProbeModule,
      imports: [ConfigModule.forRoot(config), HealthModule],
      controllers: [ProbeController],
      providers: [ProbeGateway],
    };
  }
}
