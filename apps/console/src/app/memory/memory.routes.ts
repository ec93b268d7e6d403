import type { Routes } from '@angular/router';

import { MemoryPage } from './memory-page/memory-page';

export const MEMORY_ROUTES: Routes = [{ path: '', component: MemoryPage, title: 'Memory · CashCode' }];
