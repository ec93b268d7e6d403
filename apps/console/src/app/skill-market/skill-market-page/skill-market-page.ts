import { ChangeDetectionStrategy, Component } from '@angular/core';

import { ComingSoon } from '../../shared/coming-soon/coming-soon';

/** Skill Market placeholder until the Skills issue lands. */
@Component({
  selector: 'cc-skill-market-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [ComingSoon],
  template: `<cc-coming-soon titleKey="nav.skillMarket" bodyKey="market.skillBody" icon="sparkles" />`,
  styles: `
    :host {
      display: flex;
      flex: 1;
    }
  `,
})
export class SkillMarketPage {}
