import type { Routes } from '@angular/router';

import { chatUrlMatcher } from './chat/chat-url';
import { Shell } from './core/layout/shell/shell';

export const routes: Routes = [
  {
    path: '',
    component: Shell,
    children: [
      // `/` and `/chat/:id` (chat/chat-url.ts): one route, so the chat page stays when a new chat gets its URL
      { matcher: chatUrlMatcher, title: 'CashCode', loadChildren: () => import('./chat/chat.routes').then((m) => m.CHAT_ROUTES) },
      { path: 'settings', loadChildren: () => import('./settings/settings.routes').then((m) => m.SETTINGS_ROUTES) },
      { path: 'mcp', loadChildren: () => import('./mcp-market/mcp-market.routes').then((m) => m.MCP_MARKET_ROUTES) },
      { path: 'skills', loadChildren: () => import('./skill-market/skill-market.routes').then((m) => m.SKILL_MARKET_ROUTES) },
      { path: 'evolution', loadChildren: () => import('./evolution/evolution.routes').then((m) => m.EVOLUTION_ROUTES) },
      { path: 'usage', loadChildren: () => import('./usage/usage.routes').then((m) => m.USAGE_ROUTES) },
      { path: 'automations', loadChildren: () => import('./automations/automations.routes').then((m) => m.AUTOMATIONS_ROUTES) },
      { path: 'memory', loadChildren: () => import('./memory/memory.routes').then((m) => m.MEMORY_ROUTES) },
      { path: '**', redirectTo: '' },
    ],
  },
];
