import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import type {
  CreateMcpServerRequest,
  McpServerListResponse,
  McpServerRecord,
  McpServerToolsResponse,
  UpdateMcpServerRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const BASE = '/api/mcp/servers';

/** REST calls of the MCP Market (openspec mcp). */
@Injectable({ providedIn: 'root' })
export class McpApi {
  private readonly http = inject(HttpClient);

  list(): Promise<McpServerRecord[]> {
    return firstValueFrom(this.http.get<McpServerListResponse>(BASE)).then((body) => body.servers);
  }

  create(request: CreateMcpServerRequest): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(BASE, request));
  }

  update(name: string, request: UpdateMcpServerRequest): Promise<McpServerRecord> {
    return firstValueFrom(this.http.put<McpServerRecord>(`${BASE}/${encodeURIComponent(name)}`, request));
  }

  delete(name: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(`${BASE}/${encodeURIComponent(name)}`));
  }

  connect(name: string): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(`${BASE}/${encodeURIComponent(name)}/connect`, {}));
  }

  disconnect(name: string): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(`${BASE}/${encodeURIComponent(name)}/disconnect`, {}));
  }

  tools(name: string): Promise<McpServerToolsResponse> {
    return firstValueFrom(this.http.get<McpServerToolsResponse>(`${BASE}/${encodeURIComponent(name)}/tools`));
  }
}
