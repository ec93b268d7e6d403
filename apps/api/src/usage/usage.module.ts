import { Global, Module } from '@nestjs/common';
import { UsageController } from './usage.controller';
import { UsageService } from './usage.service';

/**
 * Usage, prices and spend limits (openspec usage). Global and below every feature module (it imports only common,
 * config and events), so the agent runner, the background model, the evolver and the OpenAI-compatible API check and
 * record their model calls without an import cycle.
 */
@Global()
@Module({
  controllers: [UsageController],
  providers: [UsageService],
  exports: [UsageService],
})
export class UsageModule {}
