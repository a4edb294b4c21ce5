/**
 * Where partner webhooks may be sent (decisions.md §8): `https://` URLs whose host resolves only to public
 * addresses, so an endpoint URL cannot point the service at itself, its VPC, the instance metadata service or
 * anything else not on the public internet (SSRF). Checked when an endpoint is created and again on every
 * delivery attempt, where the addresses checked are the ones connected to (see {@link pinnedLookup}), so a DNS
 * answer that changes in between (DNS rebinding) is caught too. `ALLOW_INSECURE_WEBHOOK_URLS` (the local
 * default) lifts both rules: `http://` and private targets such as `http://127.0.0.1` are then allowed.
 *
 * "Public" is decided by an allow list for IPv6 (global unicast `2000::/3` only, less its special-purpose
 * blocks) and a deny list for IPv4 (every special-purpose block of the IANA registry), with IPv4 embedded in
 * IPv6 (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`) judged by the IPv4 address it carries.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';

export interface UrlPolicy {
  /** `ALLOW_INSECURE_WEBHOOK_URLS`: `http://` and non-public addresses allowed (local runs, tests). */
  allowInsecure: boolean;
}

/** Resolves a host name to every address it has (what `dns.lookup` with `all: true` answers). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** A URL or an address that the policy refuses; `message` is safe to show to an admin (no secrets). */
export class UnsafeWebhookUrlError extends Error {
  override readonly name = 'UnsafeWebhookUrlError';
}

const IPV4_NOT_PUBLIC: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (shared address space)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, includes the metadata service 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (includes 192.0.0.192, another cloud's metadata address)
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes the broadcast address 255.255.255.255
];

const IPV6_GLOBAL_UNICAST: ReadonlyArray<[string, number]> = [['2000::', 3]];

/** Special-purpose blocks inside 2000::/3 that are not (or not reliably) reachable public unicast. */
const IPV6_NOT_PUBLIC: ReadonlyArray<[string, number]> = [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address reached through a relay
  ['3fff::', 20], // documentation (RFC 9637)
];

const blockList = (subnets: ReadonlyArray<[string, number]>, family: 'ipv4' | 'ipv6') => {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return list;
};

const ipv4NotPublic = blockList(IPV4_NOT_PUBLIC, 'ipv4');
const ipv6GlobalUnicast = blockList(IPV6_GLOBAL_UNICAST, 'ipv6');
const ipv6NotPublic = blockList(IPV6_NOT_PUBLIC, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not part of the address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const embeddedIpv4 = (groups: number[]) => {
  const [high = 0, low = 0] = groups.slice(6);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
};

/** Whether an IP address (v4 or v6 text) is a public internet address a webhook may be sent to. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return !ipv4NotPublic.check(address, 'ipv4');
  if (isIP(address.replace(/%.*$/, '')) !== 6) return false;
  const groups = ipv6Groups(address);
  const [g0, g1, g2, g3, g4, g5] = groups;
  const firstSixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstSixZero && g5 === 0xffff) return isPublicAddress(embeddedIpv4(groups)); // IPv4-mapped ::ffff:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isPublicAddress(embeddedIpv4(groups)); // NAT64 64:ff9b::a.b.c.d (DNS64 in a VPC answers these)
  }
  const canonical = groups.map((group) => group.toString(16)).join(':');
  return ipv6GlobalUnicast.check(canonical, 'ipv6') && !ipv6NotPublic.check(canonical, 'ipv6');
}

/** A URL's host as an address, without IPv6 brackets (`[::1]` -> `::1`); `undefined` for a host name. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/**
 * The URL's own rules, without DNS: parses, `https:` (or `http:` where insecure URLs are allowed), no user
 * name or password (they would be sent to the partner's server in the clear of every log it keeps), and an IP
 * literal host must itself be public. Returns the normalised URL.
 */
export function checkUrlShape(text: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeWebhookUrlError('Must be an absolute URL');
  }
  const allowedProtocols = policy.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!allowedProtocols.includes(url.protocol)) {
    throw new UnsafeWebhookUrlError(policy.allowInsecure ? 'Must be an http:// or https:// URL' : 'Must be an https:// URL');
  }
  if (url.username !== '' || url.password !== '') throw new UnsafeWebhookUrlError('Must not contain a user name or password');
  if (url.hostname === '') throw new UnsafeWebhookUrlError('Must name a host');
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && !policy.allowInsecure && !isPublicAddress(literal)) {
    throw new UnsafeWebhookUrlError(`Must point to a public address (${literal} is not one)`);
  }
  return url;
}

/**
 * The addresses a host resolves to, each checked: all must be public (one private answer among public ones is
 * enough to refuse, as a client may pick any of them). Where insecure URLs are allowed, they are returned as
 * they are.
 */
export async function resolvePublicAddresses(hostname: string, policy: UrlPolicy, resolve: Resolver): Promise<LookupAddress[]> {
  const literal = literalAddress(hostname);
  if (literal !== undefined) {
    if (!policy.allowInsecure && !isPublicAddress(literal)) throw new UnsafeWebhookUrlError(`${literal} is not a public address`);
    return [{ address: literal, family: isIP(literal) }];
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UnsafeWebhookUrlError(
      code === 'ENOTFOUND' || code === 'ENODATA' ? `The host ${hostname} does not resolve` : `The host ${hostname} could not be resolved (${code ?? 'DNS error'})`,
    );
  }
  if (addresses.length === 0) throw new UnsafeWebhookUrlError(`The host ${hostname} does not resolve`);
  const refused = addresses.find((entry) => !isPublicAddress(entry.address));
  if (refused !== undefined && !policy.allowInsecure) {
    throw new UnsafeWebhookUrlError(`The host ${hostname} resolves to ${refused.address}, which is not a public address`);
  }
  return addresses;
}

/**
 * The full check of an endpoint URL at creation: its shape, then its host's addresses. Returns the URL exactly as
 * given (decisions.md §2 answers with `url` as sent: `HTTPS://Example.com:443` is not rewritten to
 * `https://example.com/`); every delivery parses and checks it again.
 */
export async function checkWebhookUrl(text: string, policy: UrlPolicy, resolve: Resolver): Promise<string> {
  const url = checkUrlShape(text, policy);
  if (!policy.allowInsecure) await resolvePublicAddresses(url.hostname, policy, resolve);
  return text;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http(s).request` that resolves once, refuses the connection unless every address is allowed
 * by the policy, and hands Node exactly the addresses it checked, so the socket connects to a checked address
 * and nothing resolves the name a second time (DNS rebinding between the check and the connect is impossible).
 * Node calls it with `all: true` when it may try several addresses (happy eyeballs), else for one address.
 */
export function pinnedLookup(policy: UrlPolicy, resolve: Resolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolvePublicAddresses(hostname, policy, resolve).then(
      (addresses) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const usable = family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
        const first = usable[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`The host ${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), []);
        } else if (options.all === true) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: Error) => callback(error, []),
    );
  };
}
