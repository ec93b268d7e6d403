/**
 * Failed attempts per client in a window (wrong API tokens, wrong sign-in codes, wrong `/v1` keys): after
 * `maxFailures` failures inside `windowMs` the client is throttled until its window ends. Only failures are counted,
 * so the right credential is never refused because someone else failed on purpose. At most 10,000 clients are
 * tracked: expired entries go first, then the oldest.
 */
const MAX_TRACKED_CLIENTS = 10_000;

export class FailureThrottle {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly maxFailures = 20,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True while the client is over the failure limit. */
  throttled(clientKey: string): boolean {
    const entry = this.failures.get(clientKey);
    if (!entry) return false;
    if (entry.resetAt <= this.now()) {
      this.failures.delete(clientKey);
      return false;
    }
    return entry.count >= this.maxFailures;
  }

  /** Counts one failed attempt of the client. */
  fail(clientKey: string): void {
    const now = this.now();
    const entry = this.failures.get(clientKey);
    if (entry && entry.resetAt > now) entry.count += 1;
    else this.failures.set(clientKey, { count: 1, resetAt: now + this.windowMs });
    if (this.failures.size > MAX_TRACKED_CLIENTS) this.prune(now);
  }

  /** Seconds until a throttled client may try again (0 when it has no failures on record). */
  retryAfterSeconds(clientKey: string): number {
    const entry = this.failures.get(clientKey);
    return entry ? Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000)) : 0;
  }

  private prune(now: number): void {
    for (const [key, value] of this.failures) if (value.resetAt <= now) this.failures.delete(key);
    for (const key of this.failures.keys()) {
      if (this.failures.size <= MAX_TRACKED_CLIENTS) break;
      this.failures.delete(key);
    }
  }
}
