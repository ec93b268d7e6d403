import { Module } from '@nestjs/common';
import { SandboxModule } from '../sandbox/sandbox.module';
import { BrowserService } from './browser.service';

/**
 * The server's browser (openspec browser): `BrowserService` — the Chromium process and one context per chat — and its
 * status, which the health endpoint reads. The tool itself is registered by `BrowserToolModule`, so that the health
 * endpoint does not depend on the agent.
 */
@Module({
  imports: [SandboxModule],
  providers: [BrowserService],
  exports: [BrowserService],
})
export class BrowserModule {}
