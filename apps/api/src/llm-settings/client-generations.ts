/**
 * The installed provider clients (openspec llm-settings "Requirement: Provider clients, generations and leases"): one
 * generation per saved settings; a turn leases its provider's client and keeps that generation usable until it
 * releases the lease; a replaced generation closes when its last lease is released.
 */
import type { LlmProvider } from '@cashcode/contracts';
import { LlmNotConfiguredError, type ProviderLease } from './llm-provider';
import type { ProviderClient } from './provider-client';

/** One installed set of provider clients. Leases pin a generation until released. */
interface ClientGeneration {
  readonly id: number;
  readonly clients: ReadonlyMap<LlmProvider, ProviderClient>;
  leases: number;
  retired: boolean;
  closed: boolean;
}

export class ClientGenerations {
  private nextId = 1;
  private current: ClientGeneration = this.generation(new Map());
  private readonly retired = new Set<ClientGeneration>();

  /** Installs new clients; the previous generation closes when its last lease is released. */
  install(clients: ReadonlyMap<LlmProvider, ProviderClient>): void {
    const previous = this.current;
    this.current = this.generation(clients);
    this.retire(previous);
  }

  /** Retires every client (shutdown): nothing is installed afterwards. */
  clear(): void {
    this.install(new Map());
  }

  has(provider: LlmProvider): boolean {
    return this.current.clients.has(provider);
  }

  /** Throws LlmNotConfiguredError when the provider has no installed client. */
  acquire(provider: LlmProvider): ProviderLease {
    const generation = this.current;
    const client = generation.clients.get(provider);
    if (!client) throw new LlmNotConfiguredError(provider);
    generation.leases += 1;
    let released = false;
    return {
      provider,
      client,
      generation: generation.id,
      release: () => {
        if (released) return;
        released = true;
        generation.leases -= 1;
        if (generation.retired && generation.leases === 0) this.close(generation);
      },
    };
  }

  /** Generation ids whose clients are still open: the current one and retired ones still leased. */
  openIds(): number[] {
    return [...[...this.retired].map((generation) => generation.id), this.current.id].sort((a, b) => a - b);
  }

  get currentId(): number {
    return this.current.id;
  }

  private generation(clients: ReadonlyMap<LlmProvider, ProviderClient>): ClientGeneration {
    return { id: this.nextId++, clients, leases: 0, retired: false, closed: false };
  }

  private retire(generation: ClientGeneration): void {
    generation.retired = true;
    if (generation.leases === 0) this.close(generation);
    else this.retired.add(generation);
  }

  private close(generation: ClientGeneration): void {
    if (generation.closed) return;
    generation.closed = true;
    this.retired.delete(generation);
    // the SDK clients hold no sockets of their own (a shared pool): dropping them releases everything.
    (generation.clients as Map<LlmProvider, ProviderClient>).clear();
  }
}
