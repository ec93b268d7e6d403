import { Module } from '@nestjs/common';
import { SandboxModule } from '../agent/sandbox/sandbox.module';
import { HealthController } from './health.controller';

/** `GET /api/health`: liveness, and whether exec runs confined; `GET /api/client-config`. */
@Module({ imports: [SandboxModule], controllers: [HealthController] })
export class HealthModule {}
