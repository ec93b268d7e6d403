import { Module } from '@nestjs/common';
import { BrowserModule } from '../agent/browser/browser.module';
import { SandboxModule } from '../agent/sandbox/sandbox.module';
import { HealthController } from './health.controller';

/** `GET /api/health`: liveness, and whether exec runs confined and the browser tool is offered; `GET /api/client-config`. */
@Module({ imports: [SandboxModule, BrowserModule], controllers: [HealthController] })
export class HealthModule {}
