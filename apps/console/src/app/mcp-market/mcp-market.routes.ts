import type { Routes } from '@angular/router';

import { McpMarketPage } from './mcp-market-page/mcp-market-page';

export const MCP_MARKET_ROUTES: Routes = [{ path: '', component: McpMarketPage, title: 'MCP Market · CashCode' }];
