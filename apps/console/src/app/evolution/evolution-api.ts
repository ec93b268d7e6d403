import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  SkillEvolutionProposal,
  SkillEvolutionProposalDetail,
  SkillEvolutionProposalList,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const BASE = API_PATHS.skillEvolutionProposals;

/** REST calls of the Evolution view (openspec skill-evolution). */
@Injectable({ providedIn: 'root' })
export class EvolutionApi {
  private readonly http = inject(HttpClient);

  list(): Promise<SkillEvolutionProposalList> {
    return firstValueFrom(this.http.get<SkillEvolutionProposalList>(BASE));
  }

  get(id: string): Promise<SkillEvolutionProposalDetail> {
    return firstValueFrom(this.http.get<SkillEvolutionProposalDetail>(apiPath(BASE, id)));
  }

  approve(id: string): Promise<SkillEvolutionProposal> {
    return firstValueFrom(this.http.post<SkillEvolutionProposal>(apiPath(BASE, id, 'approve'), {}));
  }

  reject(id: string): Promise<SkillEvolutionProposal> {
    return firstValueFrom(this.http.post<SkillEvolutionProposal>(apiPath(BASE, id, 'reject'), {}));
  }
}
