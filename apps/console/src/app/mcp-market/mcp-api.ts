import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  CreateMcpServerRequest,
  McpOAuthStartResponse,
  McpImportResponse,
  McpServerListResponse,
  McpServerRecord,
  McpServerResourcesResponse,
  McpServerToolsResponse,
  UpdateMcpServerRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

const BASE = API_PATHS.mcpServers;

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

  importServers(config: Record<string, unknown>): Promise<McpImportResponse> {
    return firstValueFrom(this.http.post<McpImportResponse>(apiPath(BASE, 'import'), { config }));
  }

  update(name: string, request: UpdateMcpServerRequest): Promise<McpServerRecord> {
    return firstValueFrom(this.http.put<McpServerRecord>(apiPath(BASE, name), request));
  }

  delete(name: string): Promise<void> {
    return firstValueFrom(this.http.delete<void>(apiPath(BASE, name)));
  }

  connect(name: string): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(apiPath(BASE, name, 'connect'), {}));
  }

  disconnect(name: string): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(apiPath(BASE, name, 'disconnect'), {}));
  }

  /** OAuth sign-in: the authorization server's page to open */
  oauthStart(name: string): Promise<McpOAuthStartResponse> {
    return firstValueFrom(this.http.post<McpOAuthStartResponse>(apiPath(BASE, name, 'oauth', 'start'), {}));
  }

  oauthSignOut(name: string): Promise<McpServerRecord> {
    return firstValueFrom(this.http.post<McpServerRecord>(apiPath(BASE, name, 'oauth', 'sign-out'), {}));
  }

  tools(name: string): Promise<McpServerToolsResponse> {
    return firstValueFrom(this.http.get<McpServerToolsResponse>(apiPath(BASE, name, 'tools')));
  }

  resources(name: string): Promise<McpServerResourcesResponse> {
    return firstValueFrom(this.http.get<McpServerResourcesResponse>(apiPath(BASE, name, 'resources')));
  }
}
