import { HttpClient } from '@angular/common/http';
import { Injectable, inject } from '@angular/core';
import { API_PATHS, apiPath } from '@cashcode/contracts';
import type {
  DreamRun,
  DreamRunListResponse,
  DreamTriggerResponse,
  LlmModelsResponse,
  LlmSelection,
  MemoryDocumentResponse,
  MemoryEntriesResponse,
  MemoryProvenanceRecord,
  PublicLlmSettings,
  SoulDocumentResponse,
  TrustedSource,
  TrustedSourcesResponse,
  UpdateMemoryDocumentRequest,
} from '@cashcode/contracts';
import { firstValueFrom } from 'rxjs';

export type MemoryDocumentKind = 'memory' | 'soul';

const DOCUMENT_PATHS: Record<MemoryDocumentKind, string> = {
  memory: API_PATHS.memory,
  soul: API_PATHS.memorySoul,
};

/** REST calls of the Memory view: MEMORY.md / SOUL.md, Dream runs, and the background model of the LLM settings. */
@Injectable({ providedIn: 'root' })
export class MemoryApi {
  private readonly http = inject(HttpClient);

  getDocument(kind: MemoryDocumentKind): Promise<MemoryDocumentResponse | SoulDocumentResponse> {
    return firstValueFrom(this.http.get<MemoryDocumentResponse | SoulDocumentResponse>(DOCUMENT_PATHS[kind]));
  }

  saveDocument(kind: MemoryDocumentKind, request: UpdateMemoryDocumentRequest): Promise<MemoryDocumentResponse | SoulDocumentResponse> {
    return firstValueFrom(this.http.put<MemoryDocumentResponse | SoulDocumentResponse>(DOCUMENT_PATHS[kind], request));
  }

  listDreams(limit = 50): Promise<DreamRunListResponse> {
    return firstValueFrom(this.http.get<DreamRunListResponse>(API_PATHS.dreams, { params: { limit } }));
  }

  runDream(): Promise<DreamTriggerResponse> {
    return firstValueFrom(this.http.post<DreamTriggerResponse>(API_PATHS.dream, {}));
  }

  applyDream(id: string): Promise<DreamRun> {
    return firstValueFrom(this.http.post<DreamRun>(apiPath(API_PATHS.dreams, id, 'apply'), {}));
  }

  /** A page of MEMORY.md's entries with their source and trust (the server pages: MEMORY.md may hold thousands). */
  entries(offset: number, limit: number): Promise<MemoryEntriesResponse> {
    return firstValueFrom(this.http.get<MemoryEntriesResponse>(API_PATHS.memoryEntries, { params: { offset, limit } }));
  }

  trustedSources(): Promise<TrustedSourcesResponse> {
    return firstValueFrom(this.http.get<TrustedSourcesResponse>(API_PATHS.trustedSources));
  }

  saveTrustedSources(sources: TrustedSource[]): Promise<TrustedSourcesResponse> {
    return firstValueFrom(this.http.put<TrustedSourcesResponse>(API_PATHS.trustedSources, { sources }));
  }

  revertDream(id: string): Promise<DreamRun> {
    return firstValueFrom(this.http.post<DreamRun>(apiPath(API_PATHS.dreams, id, 'revert'), {}));
  }

  verifyEntry(entry: string): Promise<MemoryProvenanceRecord> {
    return firstValueFrom(this.http.post<MemoryProvenanceRecord>(API_PATHS.memoryProvenanceVerify, { entry }));
  }

  llmSettings(): Promise<PublicLlmSettings> {
    return firstValueFrom(this.http.get<PublicLlmSettings>(API_PATHS.llmSettings));
  }

  models(): Promise<LlmModelsResponse> {
    return firstValueFrom(this.http.get<LlmModelsResponse>(API_PATHS.llmModels));
  }

  /** Saves only the background model: the saved connections are sent back unchanged (the stored key is kept). */
  saveBackgroundModel(settings: PublicLlmSettings, background: LlmSelection | null): Promise<PublicLlmSettings> {
    return firstValueFrom(
      this.http.put<PublicLlmSettings>(API_PATHS.llmSettings, {
        openai_compatible: { base_url: settings.openai_compatible.base_url },
        ollama: { base_url: settings.ollama.base_url },
        background,
      }),
    );
  }
}
