import { BlockList, isIP } from 'node:net';

/**
 * Which address a request comes from, for limits per client (docs/api-design.md, "Rate limits").
 * X-Forwarded-For is believed only as far as it was written by proxies in TRUSTED_PROXIES:
 * anyone can send the header, so a client not behind a trusted proxy is its socket address.
 */
export class ClientAddressResolver {
  private readonly trusted = new BlockList();

  /** `ranges`: IP addresses and CIDR ranges, as validated by loadConfig (TRUSTED_PROXIES). */
  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const [address, prefix] = range.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.trusted.addAddress(address, type);
      else this.trusted.addSubnet(address, Number(prefix), type);
    }
  }

  /**
   * The socket peer when it is not a trusted proxy; otherwise the right-most X-Forwarded-For
   * entry that is not a trusted proxy: the one the outermost trusted proxy saw connect. Entries
   * left of it were written by the client and prove nothing.
   */
  resolve(socketAddress: string | undefined, forwardedFor: string | string[] | undefined): string {
    let client = normalize(socketAddress ?? '');
    if (!this.isTrusted(client) || forwardedFor === undefined) return client;
    const hops = [forwardedFor]
      .flat()
      .join(',')
      .split(',')
      .map((hop) => normalize(hop.trim()));
    for (const hop of hops.reverse()) {
      // Not an address: a proxy wrote something unexpected; the last trusted hop is as far as
      // anything is known.
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!this.isTrusted(hop)) return hop;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    const version = isIP(address);
    return version !== 0 && this.trusted.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }
}

/** `::ffff:192.0.2.1` (an IPv4 peer on a dual-stack socket) counts as `192.0.2.1`. */
function normalize(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}
