import type { Routes } from '@angular/router';

import { EvolutionPage } from './evolution-page/evolution-page';

export const EVOLUTION_ROUTES: Routes = [{ path: '', component: EvolutionPage, title: 'Skill evolution · CashCode' }];
