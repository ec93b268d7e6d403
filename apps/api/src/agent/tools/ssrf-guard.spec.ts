import type { LookupAddress } from 'node:dns';
import { BlockedUrlError, SsrfGuard, type HostResolver } from './ssrf-guard';

/** Stands for DNS: no test here connects anywhere; the guard only resolves and classifies. */
const fakeDns: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'ten.test': [{ address: '10.1.2.3', family: 4 }],
  'corp.test': [{ address: '172.20.0.4', family: 4 }],
  'home.test': [{ address: '192.168.0.10', family: 4 }],
  'cgnat.test': [{ address: '100.64.0.9', family: 4 }],
  'nat64.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'multicast.test': [{ address: '224.0.0.251', family: 4 }],
  'ula.test': [{ address: 'fd00::5', family: 6 }],
  'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'mixed.test': [
    { address: '8.8.8.8', family: 4 },
    { address: '192.168.1.1', family: 4 },
  ],
  'public.test': [
    { address: '8.8.8.8', family: 4 },
    { address: '2606:4700:4700::1111', family: 6 },
  ],
};
const resolver: HostResolver = async (hostname) => {
  const answer = fakeDns[hostname];
  if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return answer;
};

describe(SsrfGuard.name, () => {
  const guard = new SsrfGuard({ allowPrivate: false, resolver });

  it.each(['metadata.test', 'ten.test', 'corp.test', 'home.test', 'cgnat.test', 'nat64.test', 'multicast.test', 'ula.test', 'mapped.test'])(
    'Scenario: a name resolving to a blocked range (%s) is refused',
    async (host) => {
      await expect(guard.resolveChecked(host)).rejects.toBeInstanceOf(BlockedUrlError);
    },
  );

  it('Scenario: one private answer among public ones refuses the whole name', async () => {
    await expect(guard.resolveChecked('mixed.test')).rejects.toThrow('blocked address 192.168.1.1 (private)');
  });

  it('Scenario: a public name passes and a trailing dot is normalised', async () => {
    await expect(guard.resolveChecked('public.test.')).resolves.toHaveLength(2);
  });

  it('Scenario: the connect-time lookup hands out only checked addresses, in both callback forms', async () => {
    const all = await new Promise<LookupAddress[]>((resolve, reject) =>
      guard.lookup('public.test', { all: true }, (error, addresses) =>
        error ? reject(error) : resolve(addresses as LookupAddress[]),
      ),
    );
    expect(all).toEqual([
      { address: '8.8.8.8', family: 4 },
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
    const one = await new Promise<[string, number | undefined]>((resolve, reject) =>
      guard.lookup('public.test', { family: 6 }, (error, address, family) =>
        error ? reject(error) : resolve([address as string, family]),
      ),
    );
    expect(one).toEqual(['2606:4700:4700::1111', 6]);
    const refused = await new Promise<Error | null>((resolve) => guard.lookup('metadata.test', {}, (error) => resolve(error)));
    expect(refused).toBeInstanceOf(BlockedUrlError);
  });

  it('Scenario: only http and https, no credentials, literal IPs checked before connecting', () => {
    expect(() => guard.checkUrl(new URL('file:///etc/passwd'))).toThrow('only http and https');
    expect(() => guard.checkUrl(new URL('gopher://x.test/'))).toThrow('only http and https');
    expect(() => guard.checkUrl(new URL('http://user:pw@public.test/'))).toThrow('credentials');
    expect(() => guard.checkUrl(new URL('http://169.254.169.254/latest/meta-data/'))).toThrow('linkLocal');
    expect(() => guard.checkUrl(new URL('http://[fd00::1]/'))).toThrow('uniqueLocal');
    expect(() => guard.checkUrl(new URL('http://[64:ff9b::a00:1]/'))).toThrow('private');
    expect(() => guard.checkUrl(new URL('http://8.8.8.8/'))).not.toThrow();
    expect(() => guard.checkUrl(new URL('https://public.test/'))).not.toThrow();
  });

  it('Scenario: unknown names fail to resolve with a clear message', async () => {
    await expect(guard.resolveChecked('nowhere.test')).rejects.toThrow('could not resolve nowhere.test');
  });

  it('Scenario: the allow-private switch turns the address checks off', async () => {
    const open = new SsrfGuard({ allowPrivate: true, resolver });
    await expect(open.resolveChecked('ten.test')).resolves.toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(() => open.checkUrl(new URL('http://127.0.0.1/'))).not.toThrow();
    expect(() => open.checkUrl(new URL('ftp://127.0.0.1/'))).toThrow('only http and https');
  });
});
