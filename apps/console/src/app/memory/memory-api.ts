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
  MemoryProvenanceRecord,
  MemoryProvenanceResponse,
  PublicLlmSettings,
  SoulDocumentResponse,
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

  revertDream(id: string): Promise<DreamRun> {
    return firstValueFrom(this.http.post<DreamRun>(apiPath(API_PATHS.dreams, id, 'revert'), {}));
  }

  /** Every record of the provenance log, oldest first (read in pages of 1000). */
  async provenance(): Promise<MemoryProvenanceRecord[]> {
    const records: MemoryProvenanceRecord[] = [];
    for (let offset = 0; ; ) {
      const page = await firstValueFrom(
        this.http.get<MemoryProvenanceResponse>(API_PATHS.memoryProvenance, { params: { offset, limit: 1000 } }),
      );
      records.push(...page.records);
      offset += page.records.length;
      if (page.records.length === 0 || offset >= page.total) return records;
    }
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
