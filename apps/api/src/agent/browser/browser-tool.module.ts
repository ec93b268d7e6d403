import { Logger, Module, type OnModuleInit } from '@nestjs/common';
import { formatEvent } from '../../common/log-format';
import { ConfigError } from '../../config/app-config';
import { AgentModule } from '../agent.module';
import { ToolRegistry } from '../tool-registry';
import { BrowserModule } from './browser.module';
import { BrowserService } from './browser.service';
import { BrowserTool } from './browser.tool';

/**
 * Registers the `browser` tool into the agent's ToolRegistry when the browser is available (CASHCODE_BROWSER_ENABLED,
 * else whether Chromium is installed); `CASHCODE_BROWSER_ENABLED=true` without Chromium stops the start.
 */
@Module({ imports: [AgentModule, BrowserModule] })
export class BrowserToolModule implements OnModuleInit {
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
