import type { Routes } from '@angular/router';

import { DataPage } from './data-page/data-page';
import { LlmSettingsPage } from './llm-settings-page/llm-settings-page';
import { OpenAiCompatPage } from './openai-compat-page/openai-compat-page';
import { ToolPoliciesPage } from './tool-policies-page/tool-policies-page';
import { ChannelsPage } from '../channels/channels-page/channels-page';
import { unsavedChangesGuard } from '../shared/unsaved-changes/unsaved-changes';
import { UsageSettingsPage } from '../usage/usage-settings-page/usage-settings-page';

export const SETTINGS_ROUTES: Routes = [
  { path: '', pathMatch: 'full', redirectTo: 'llm' },
  { path: 'llm', component: LlmSettingsPage, title: 'LLM settings · CashCode' },
  { path: 'tools', component: ToolPoliciesPage, title: 'Tools & approvals · CashCode' },
  { path: 'openai', component: OpenAiCompatPage, title: 'OpenAI-compatible API · CashCode' },
  { path: 'channels', component: ChannelsPage, title: 'Channels · CashCode' },
  { path: 'data', component: DataPage, title: 'Data · CashCode' },
  { path: 'usage', component: UsageSettingsPage, canDeactivate: [unsavedChangesGuard], title: 'Prices & limits · CashCode' },
];
