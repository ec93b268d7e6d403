import type { Routes } from '@angular/router';

import { UsagePage } from './usage-page/usage-page';

export const USAGE_ROUTES: Routes = [{ path: '', component: UsagePage, title: 'Usage · CashCode' }];
