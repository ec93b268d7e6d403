import { classifyAddress, normalizeHost, parseIpLiteral } from './address-classifier';

describe('address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::10.1.2.3', 'private'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['127.0.0.1.', 'loopback'],
    ['167772161', 'private'],
    ['0xa9fea9fe', 'linkLocal'],
  ])('Scenario: %s is blocked as %s', (input, range) => {
    const verdict = classifyAddress(input);
    expect(verdict).toMatchObject({ allowed: false, range });
  });

  it.each([
    ['8.8.8.8'],
    ['93.184.216.34'],
    ['172.32.0.1'],
    ['100.128.0.1'],
    ['2606:4700:4700::1111'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::808:808'],
    ['2002:808:808::1'],
  ])('Scenario: public unicast %s is allowed', (input) => {
    expect(classifyAddress(input).allowed).toBe(true);
  });

  it('Scenario: names are not IP literals and are refused by the classifier', () => {
    expect(parseIpLiteral('localhost')).toBeNull();
    expect(parseIpLiteral('example.com')).toBeNull();
    expect(parseIpLiteral('deadbeef.example')).toBeNull();
    expect(classifyAddress('localhost')).toMatchObject({ allowed: false, range: 'not an IP address' });
  });

  it('Scenario: host spellings are normalised', () => {
    expect(normalizeHost('[::1]')).toBe('::1');
    expect(normalizeHost('Example.COM..')).toBe('example.com');
    expect(parseIpLiteral('2130706433')).toBe('127.0.0.1');
    expect(parseIpLiteral('0177.0.0.1')).toBe('127.0.0.1');
    expect(parseIpLiteral('0x7f000001')).toBe('127.0.0.1');
    expect(parseIpLiteral('127.1')).toBe('127.0.0.1');
    expect(parseIpLiteral('[::ffff:127.0.0.1]')).toBe('::ffff:7f00:1');
  });
});
