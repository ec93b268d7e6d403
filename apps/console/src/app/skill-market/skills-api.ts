import { HttpClient, HttpParams } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  DeleteInvalidSkillResponse,
  SkillContentResponse,
  SkillImportResponse,
  SkillListQuery,
  SkillPreApprovals,
  SkillListResponse,
  SkillRecordWithPath,
  SkillReplaceResponse,
  SkillVersionsResponse,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const BASE = API_PATHS.skills;

/** Query string of the list call with keys in the original console's order, empty values omitted (openspec console). */
export function listParams(query: SkillListQuery): HttpParams {
  let params = new HttpParams();
  if (query.source) params = params.set('source', query.source);
  if (query.enabled !== undefined) params = params.set('enabled', String(query.enabled));
  if (query.availability) params = params.set('availability', query.availability);
  if (query.query && query.query.trim() !== '') params = params.set('query', query.query.trim());
  if (query.page !== undefined) params = params.set('page', String(query.page));
  if (query.page_size !== undefined) params = params.set('page_size', String(query.page_size));
  return params;
}

/** REST calls of the Skill Market (openspec skills). */
@Injectable({ providedIn: 'root' })
export class SkillsApi {
  private readonly http = inject(HttpClient);

  list(query: SkillListQuery): Promise<SkillListResponse> {
    return firstValueFrom(this.http.get<SkillListResponse>(BASE, { params: listParams(query) }));
  }

  content(name: string): Promise<SkillContentResponse> {
    return firstValueFrom(this.http.get<SkillContentResponse>(apiPath(BASE, name, 'content')));
  }

  replace(name: string, content: string, expectedHash: string): Promise<SkillReplaceResponse> {
    return firstValueFrom(this.http.put<SkillReplaceResponse>(apiPath(BASE, name), { content, expected_hash: expectedHash }));
  }

  setEnabled(name: string, enabled: boolean): Promise<SkillRecordWithPath> {
    return firstValueFrom(this.http.patch<SkillRecordWithPath>(apiPath(BASE, name, 'enabled'), { enabled }));
  }

  delete(name: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(apiPath(BASE, name)));
  }

  versions(name: string): Promise<string[]> {
    return firstValueFrom(this.http.get<SkillVersionsResponse>(apiPath(BASE, name, 'versions'))).then((body) => body.versions);
  }

  rollback(name: string, version: string): Promise<SkillRecordWithPath> {
    return firstValueFrom(
      this.http.post<SkillRecordWithPath>(apiPath(BASE, name, 'rollback', version), {}),
    );
  }

  /** `select`: Skills to take from an archive holding several; `replaceBuiltin`: shadow a built-in of the same name. */
  import(file: File, options: { select?: readonly string[]; replaceBuiltin?: boolean } = {}): Promise<SkillImportResponse> {
    const form = new FormData();
    form.append('file', file, file.name);
    let params = new HttpParams();
    for (const name of options.select ?? []) params = params.append('select', name);
    if (options.replaceBuiltin) params = params.set('replace_builtin', 'true');
    return firstValueFrom(this.http.post<SkillImportResponse>(apiPath(BASE, 'import'), form, { params }));
  }

  /** Grants the Skill's pre-approvals for the content the owner saw (`hash`); 409 when it changed since. */
  grantPreApprovals(name: string, hash: string): Promise<SkillPreApprovals> {
    return firstValueFrom(this.http.post<SkillPreApprovals>(apiPath(BASE, name, 'pre-approvals'), { hash }));
  }

  revokePreApprovals(name: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(apiPath(BASE, name, 'pre-approvals')));
  }

  deleteInvalid(source: string, directory: string): Promise<DeleteInvalidSkillResponse> {
    return firstValueFrom(
      this.http.delete<DeleteInvalidSkillResponse>(
        apiPath(BASE, 'invalid', source, directory),
      ),
    );
  }
}
