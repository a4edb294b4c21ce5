import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from '@jest/globals';
import {
  checkUrlShape,
  checkWebhookUrl,
  isPublicAddress,
  pinnedLookup,
  type Resolver,
  resolvePublicAddresses,
  UnsafeWebhookUrlError,
} from '../../../lib/webhooks/url-safety';

const strict = { allowInsecure: false };
const insecure = { allowInsecure: true };

const resolverOf =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('isPublicAddress', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.63.255.255', // just below carrier-grade NAT
    '100.128.0.0', // just above it
    '172.15.255.255', // just below 172.16/12
    '172.32.0.0', // just above it
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81b::200e',
    '2001:4860:4860::8888', // just past the IETF block 2001::/23
    '::ffff:8.8.8.8', // IPv4-mapped public
    '64:ff9b::8.8.8.8', // NAT64 of a public address (DNS64 answers these)
  ])('takes %s as public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['10.0.0.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT, last'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'cloud metadata service'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private, last'],
    ['192.0.0.192', 'IETF protocol assignments (another metadata address)'],
    ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with a zone'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'the metadata service over IPv6'],
    ['ff02::1', 'IPv6 multicast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['2001::1', 'Teredo'],
    ['2002:a00:1::1', '6to4'],
    ['3fff::1', 'IPv6 documentation (RFC 9637)'],
    ['100::1', 'discard prefix'],
    ['5f00::1', 'SRv6 SIDs'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata service'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'IPv4-mapped private, uncompressed'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata service'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['not-an-address', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe('checkUrlShape', () => {
  it('accepts https on any port, normalised', () => {
    expect(checkUrlShape('https://hooks.example.com:8443/in?x=1', strict).href).toBe('https://hooks.example.com:8443/in?x=1');
    expect(checkUrlShape('HTTPS://Hooks.Example.com/a', strict).href).toBe('https://hooks.example.com/a');
  });

  it.each([
    ['http://hooks.example.com/', 'https://'],
    ['ftp://hooks.example.com/', 'https://'],
    ['hooks.example.com/in', 'absolute URL'],
    ['https://user:pass@hooks.example.com/', 'user name or password'],
    ['https://token@hooks.example.com/', 'user name or password'],
    ['https://127.0.0.1/', 'public address'],
    ['https://[::1]:8443/', 'public address'],
    ['https://[::ffff:169.254.169.254]/', 'public address'],
    ['https://2130706433/', 'public address'], // 127.0.0.1 written as one number
    ['https://0x7f.1/', 'public address'], // 127.0.0.1 in hex shorthand
    ['https://169.254.169.254/latest/meta-data/', 'public address'],
  ])('refuses %s without insecure URLs allowed', (url, reason) => {
    expect(() => checkUrlShape(url, strict)).toThrow(UnsafeWebhookUrlError);
    expect(() => checkUrlShape(url, strict)).toThrow(reason);
  });

  it('allows http and private targets where insecure URLs are allowed, but never credentials or other schemes', () => {
    expect(checkUrlShape('http://127.0.0.1:3000/hook', insecure).href).toBe('http://127.0.0.1:3000/hook');
    expect(checkUrlShape('https://10.0.0.5/hook', insecure).hostname).toBe('10.0.0.5');
    expect(() => checkUrlShape('http://a:b@127.0.0.1/', insecure)).toThrow('user name or password');
    expect(() => checkUrlShape('file:///etc/passwd', insecure)).toThrow('http:// or https://');
  });
});

describe('resolving a host (creation and delivery)', () => {
  const resolve = resolverOf({
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'rebind.example': ['169.254.169.254'],
    'mapped.example': ['::ffff:127.0.0.1'],
  });

  it('accepts a host whose every address is public', async () => {
    await expect(resolvePublicAddresses('public.example', strict, resolve)).resolves.toHaveLength(2);
    await expect(checkWebhookUrl('https://public.example/hook', strict, resolve)).resolves.toBe('https://public.example/hook');
  });

  it('refuses a host resolving to one public and one private address, naming the private one', async () => {
    await expect(checkWebhookUrl('https://mixed.example/hook', strict, resolve)).rejects.toThrow('resolves to 10.0.0.7');
  });

  it('refuses hosts resolving to the metadata service or an IPv4-mapped loopback, and hosts that do not resolve', async () => {
    await expect(checkWebhookUrl('https://rebind.example/', strict, resolve)).rejects.toThrow('169.254.169.254');
    await expect(checkWebhookUrl('https://mapped.example/', strict, resolve)).rejects.toThrow('::ffff:127.0.0.1');
    await expect(checkWebhookUrl('https://nowhere.example/', strict, resolve)).rejects.toThrow('does not resolve');
  });

  it('does not resolve at all where insecure URLs are allowed', async () => {
    const failing: Resolver = async () => {
      throw new Error('must not be called');
    };
    await expect(checkWebhookUrl('http://localhost:3000/hook', insecure, failing)).resolves.toBe('http://localhost:3000/hook');
  });
});

describe('pinnedLookup (the delivery-time check)', () => {
  const resolve = resolverOf({ 'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'], 'mixed.example': ['93.184.216.34', '10.0.0.7'] });
  const lookupWith = (policy: { allowInsecure: boolean }, hostname: string, options: { all?: boolean; family?: number }) =>
    new Promise<{ error: Error | null; address: unknown; family: unknown }>((done) => {
      pinnedLookup(policy, resolve)(hostname, options, (error, address, family) => done({ error, address, family }));
    });

  it('hands Node exactly the checked addresses, all of them or the first (or the first of a family)', async () => {
    expect(await lookupWith(strict, 'public.example', { all: true })).toMatchObject({
      error: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
    });
    expect(await lookupWith(strict, 'public.example', {})).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await lookupWith(strict, 'public.example', { family: 6 })).toEqual({
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
  });

  it('fails the connection when any address is not public, so no socket is opened', async () => {
    const { error } = await lookupWith(strict, 'mixed.example', { all: true });

    expect(error).toBeInstanceOf(UnsafeWebhookUrlError);
    expect(error?.message).toContain('10.0.0.7');
  });

  it('lets private addresses through where insecure URLs are allowed', async () => {
    expect((await lookupWith(insecure, 'mixed.example', { all: true })).error).toBeNull();
  });
});
