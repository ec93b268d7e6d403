import { Logger, Module, type OnModuleInit } from '@nestjs/common';
import { formatEvent } from '../../common/log-format';
import { ConfigError } from '../../config/app-config';
import { AgentModule } from '../agent.module';
import { SandboxModule } from '../sandbox/sandbox.module';
import { ToolRegistry } from '../tool-registry';
import { BrowserService } from './browser.service';
import { BrowserTool } from './browser.tool';

/**
 * The `browser` tool (openspec browser): `BrowserService` (the Chromium process and one context per chat) and the
 * tool, registered into the agent's ToolRegistry when the browser is available (CASHCODE_BROWSER_ENABLED, else
 * whether Chromium is installed). The health endpoint reads `BrowserService.status()`.
 */
@Module({
  imports: [AgentModule, SandboxModule],
  providers: [BrowserService],
  exports: [BrowserService],
})
export class BrowserModule implements OnModuleInit {
  private readonly logger = new Logger('Browser');

  constructor(
    private readonly browser: BrowserService,
    private readonly registry: ToolRegistry,
  ) {}

  onModuleInit(): void {
    const status = this.browser.status();
    if (this.browser.required && !status.enabled) {
      throw new ConfigError(`CASHCODE_BROWSER_ENABLED=true, but ${status.reason ?? 'the browser is unavailable'}: install chromium or set CASHCODE_BROWSER_EXECUTABLE`);
    }
    if (status.enabled) this.registry.register(new BrowserTool(this.browser));
    this.logger.debug(formatEvent('browser.status', { enabled: status.enabled, sandboxed: status.sandboxed, reason: status.reason ?? '' }));
  }
}
