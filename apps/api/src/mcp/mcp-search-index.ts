/**
 * The tool_search index (openspec mcp) over the shared BM25 index, kept incrementally per server: a server's documents
 * are replaced only when its live tools, its cache entry or its catalog entry changed.
 *
 * Documents per configured server: its live tools (callable) merged with its cached tools (valid fingerprint; the
 * live tool wins on the same original name), each with the text `display_name, server description, tool name,
 * camel-split tool name, tool description`; a server with neither gets one service stub (`name display_name
 * description`).
 */
import { Bm25Index, tokenize, type Bm25Hit } from '../common/bm25';
import type { McpServerConfig, McpToolDescriptor } from './mcp.types';

export type SearchDocKind = 'live' | 'cached' | 'stub';

export interface SearchDoc {
  server: string;
  displayName: string;
  serverDescription: string;
  kind: SearchDocKind;
  /** original tool name (live / cached) */
  original: string;
  /** wrapper name (live tools only) */
  wrapper: string;
  description: string;
}

export interface ServerSearchSource {
  config: McpServerConfig;
  /** live tools with their wrapper names (null when not connected) */
  live: Array<{ tool: McpToolDescriptor; wrapper: string }> | null;
  /** changes whenever `live` changes */
  liveVersion: number;
  cached: McpToolDescriptor[] | null;
  /** changes whenever `cached` changes */
  cacheVersion: number;
}

function docText(parts: Array<string | undefined>): string {
  return parts.filter((part): part is string => typeof part === 'string' && part !== '').join(' ');
}

export class McpSearchIndex {
  /** documents are their own keys */
  private readonly index = new Bm25Index<SearchDoc>();
  /** server → [signature, its documents] */
  private readonly servers = new Map<string, { signature: string; docs: SearchDoc[] }>();

  get size(): number {
    return this.index.size;
  }

  /** Brings the index up to date with the given servers (all configured servers). */
  sync(sources: readonly ServerSearchSource[]): void {
    const seen = new Set<string>();
    for (const source of sources) {
      const { config } = source;
      seen.add(config.name);
      const signature = [
        config.displayName,
        config.description,
        source.live === null ? 'off' : `live:${source.liveVersion}`,
        source.cached === null ? 'nocache' : `cache:${source.cacheVersion}`,
      ].join('\u0000');
      const known = this.servers.get(config.name);
      if (known && known.signature === signature) continue;
      this.removeServer(config.name);
      this.servers.set(config.name, { signature, docs: this.addServer(source) });
    }
    for (const name of [...this.servers.keys()]) if (!seen.has(name)) this.removeServer(name);
  }

  search(query: string, limit: number): Array<Bm25Hit<SearchDoc> & { doc: SearchDoc }> {
    return this.index.search(query, limit).map((hit) => ({ ...hit, doc: hit.key }));
  }

  private removeServer(name: string): void {
    const known = this.servers.get(name);
    if (!known) return;
    for (const doc of known.docs) this.index.remove(doc);
    this.servers.delete(name);
  }

  private addServer(source: ServerSearchSource): SearchDoc[] {
    const { config } = source;
    const docs: SearchDoc[] = [];
    // the server's part of every tool document is tokenized once
    const serverTokens = tokenize(docText([config.displayName, config.description]));
    const add = (kind: SearchDocKind, original: string, wrapper: string, description: string, ...tokens: string[][]) => {
      const doc: SearchDoc = {
        server: config.name,
        displayName: config.displayName,
        serverDescription: config.description,
        kind,
        original,
        wrapper,
        description,
      };
      this.index.addTokens(doc, ...tokens);
      docs.push(doc);
    };
    // the tokenizer splits camelCase itself, so the camel-split name has the name's tokens: counted twice
    const toolTokens = (tool: McpToolDescriptor): string[][] => {
      const name = tokenize(tool.name);
      return [serverTokens, name, name, tokenize(tool.description)];
    };
    const liveNames = new Set<string>();
    for (const { tool, wrapper } of source.live ?? []) {
      liveNames.add(tool.name);
      add('live', tool.name, wrapper, tool.description, ...toolTokens(tool));
    }
    for (const tool of source.cached ?? []) {
      if (!liveNames.has(tool.name)) add('cached', tool.name, '', tool.description, ...toolTokens(tool));
    }
    if (docs.length === 0) {
      add('stub', '', '', config.description, tokenize(docText([config.name, config.displayName, config.description])));
    }
    return docs;
  }
}
