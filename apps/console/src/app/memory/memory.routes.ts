import type { Routes } from '@angular/router';

import { unsavedChangesGuard } from '../shared/unsaved-changes/unsaved-changes';
import { MemoryPage } from './memory-page/memory-page';

export const MEMORY_ROUTES: Routes = [{ path: '', component: MemoryPage, canDeactivate: [unsavedChangesGuard], title: 'Memory · CashCode' }];
