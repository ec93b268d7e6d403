/**
 * The SSRF guard for URLs a model or a remote server hands us (SECURITY.md, "SSRF guard of web_fetch").
 *
 * - Only `http:` and `https:`.
 * - IP literals (every spelling, see address-classifier) are judged before connecting, since a custom `lookup` is
 *   skipped for them; names are resolved by the guard's `lookup`, which Node calls AT CONNECT TIME, and every
 *   resolved address must be public unicast (one private answer refuses the whole name — DNS rebinding and
 *   mixed answers cannot slip through).
 * - `allowPrivate` (CASHCODE_FETCH_ALLOW_PRIVATE=true) switches the address checks off; `trustedHosts` exempts
 *   named hosts (used by tests to stand for "a public host" served locally).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { classifyAddress, normalizeHost, parseIpLiteral } from './address-classifier';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable for tests). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/** A URL or address refused by the guard; the message is safe to show. */
export class BlockedUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedUrlError';
  }
}

export interface SsrfGuardOptions {
  allowPrivate: boolean;
  resolver?: HostResolver;
  /** host names whose addresses are not checked (tests) */
  trustedHosts?: readonly string[];
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The `lookup` signature node:net calls (with `all: true` under autoSelectFamily). */
export type GuardedLookup = (
  hostname: string,
  options: LookupOneOptions | LookupAllOptions | number | undefined,
  callback: LookupCallback,
) => void;

export class SsrfGuard {
  private readonly resolver: HostResolver;
  private readonly trusted: ReadonlySet<string>;

  constructor(private readonly options: SsrfGuardOptions) {
    this.resolver = options.resolver ?? systemResolver;
    this.trusted = new Set((options.trustedHosts ?? []).map((host) => normalizeHost(host)));
  }

  /** Scheme check and, for an IP literal host, the address check. Throws BlockedUrlError. */
  checkUrl(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new BlockedUrlError(`only http and https URLs can be fetched (got ${url.protocol.replace(/:$/, '')})`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new BlockedUrlError('URLs with credentials are not fetched');
    }
    const literal = parseIpLiteral(url.hostname);
    if (literal !== null) this.checkAddress(literal, url.hostname);
  }

  /** Throws BlockedUrlError when the address is not public unicast (unless private addresses are allowed). */
  checkAddress(address: string, host: string): void {
    if (this.options.allowPrivate || this.trusted.has(normalizeHost(host))) return;
    const verdict = classifyAddress(address);
    if (!verdict.allowed) {
      throw new BlockedUrlError(
        `blocked address ${verdict.address} (${verdict.range}) for host ${normalizeHost(host)}: ` +
          'only public addresses can be fetched',
      );
    }
  }

  /** Resolves a name and checks every address; used at connect time through `lookup`. */
  async resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    const literal = parseIpLiteral(hostname);
    if (literal !== null) {
      this.checkAddress(literal, hostname);
      return [{ address: literal, family: literal.includes(':') ? 6 : 4 }];
    }
    let answers: ResolvedAddress[];
    try {
      answers = await this.resolver(normalizeHost(hostname));
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'error';
      throw Object.assign(new Error(`could not resolve ${normalizeHost(hostname)} (${code})`), { code: 'ENOTFOUND' });
    }
    if (answers.length === 0) {
      throw Object.assign(new Error(`could not resolve ${normalizeHost(hostname)}`), { code: 'ENOTFOUND' });
    }
    for (const answer of answers) this.checkAddress(answer.address, hostname);
    return answers;
  }

  /** A `lookup` for http.request / net.connect that only hands out checked addresses. */
  readonly lookup: GuardedLookup = (hostname, options, callback) => {
    const wantsAll = typeof options === 'object' && options !== null && options.all === true;
    const family = typeof options === 'number' ? options : typeof options === 'object' && options !== null ? options.family : 0;
    this.resolveChecked(hostname).then(
      (answers) => {
        const usable = family === 4 || family === 6 ? answers.filter((answer) => answer.family === family) : answers;
        const list = usable.length > 0 ? usable : answers;
        if (wantsAll) {
          callback(null, list.map((answer) => ({ address: answer.address, family: answer.family })));
        } else {
          const first = list[0] as ResolvedAddress;
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, wantsAll ? [] : ''),
    );
  };
}
