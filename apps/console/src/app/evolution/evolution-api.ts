import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import type {
  SkillEvolutionProposal,
  SkillEvolutionProposalDetail,
  SkillEvolutionProposalList,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const BASE = '/api/skill-evolution/proposals';

/** REST calls of the Evolution view (openspec skill-evolution). */
@Injectable({ providedIn: 'root' })
export class EvolutionApi {
  private readonly http = inject(HttpClient);

  list(): Promise<SkillEvolutionProposalList> {
    return firstValueFrom(this.http.get<SkillEvolutionProposalList>(BASE));
  }

  get(id: string): Promise<SkillEvolutionProposalDetail> {
    return firstValueFrom(this.http.get<SkillEvolutionProposalDetail>(`${BASE}/${encodeURIComponent(id)}`));
  }

  approve(id: string): Promise<SkillEvolutionProposal> {
    return firstValueFrom(this.http.post<SkillEvolutionProposal>(`${BASE}/${encodeURIComponent(id)}/approve`, {}));
  }

  reject(id: string): Promise<SkillEvolutionProposal> {
    return firstValueFrom(this.http.post<SkillEvolutionProposal>(`${BASE}/${encodeURIComponent(id)}/reject`, {}));
  }
}
