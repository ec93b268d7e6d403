import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type { ApprovalAuditResponse, ToolPoliciesResponse, UpdateToolPoliciesRequest } from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

/** REST calls of the Tools & approvals view: policies, standing rules and the approval audit log. */
@Injectable({ providedIn: 'root' })
export class ToolPoliciesApi {
  private readonly http = inject(HttpClient);

  get(): Promise<ToolPoliciesResponse> {
    return firstValueFrom(this.http.get<ToolPoliciesResponse>(API_PATHS.toolPolicies));
  }

  /** Saves the given maps; the response is the stored state (null when the server answers without a body). */
  update(request: UpdateToolPoliciesRequest): Promise<ToolPoliciesResponse | null> {
    return firstValueFrom(this.http.put<ToolPoliciesResponse | null>(API_PATHS.toolPolicies, request));
  }

  revokeRule(id: string): Promise<unknown> {
    return firstValueFrom(this.http.delete(apiPath(API_PATHS.toolPolicyRules, id)));
  }

  audit(offset: number, limit: number): Promise<ApprovalAuditResponse> {
    return firstValueFrom(this.http.get<ApprovalAuditResponse>(API_PATHS.approvalAudit, { params: { offset, limit } }));
  }
}
