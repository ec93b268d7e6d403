import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';

/** `GET /api/health` (spec §3.1). */
@Module({ controllers: [HealthController] })
export class HealthModule {}
