import type { Routes } from '@angular/router';

import { SkillMarketPage } from './skill-market-page/skill-market-page';

export const SKILL_MARKET_ROUTES: Routes = [{ path: '', component: SkillMarketPage, title: 'Skill Market · CashCode' }];
