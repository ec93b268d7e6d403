import { ChangeDetectionStrategy, Component } from '@angular/core';

import { ComingSoon } from '../../shared/coming-soon/coming-soon';

/** MCP Market placeholder until the MCP issue lands. */
@Component({
  selector: 'cc-mcp-market-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [ComingSoon],
  template: `<cc-coming-soon titleKey="nav.mcpMarket" bodyKey="market.mcpBody" icon="hub" />`,
  styles: `
    :host {
      display: flex;
      flex: 1;
    }
  `,
})
export class McpMarketPage {}
