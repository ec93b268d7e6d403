import type { Routes } from '@angular/router';

import { AutomationsPage } from './automations-page/automations-page';

export const AUTOMATIONS_ROUTES: Routes = [{ path: '', component: AutomationsPage, title: 'Automations · CashCode' }];
