import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { AppConfig } from '../config/app-config.js';

/** IANA's global unicast block: IPv6 outside it is reserved, local or special-purpose. */
const GLOBAL_UNICAST_IPV6 = ipaddr.parseCIDR('2000::/3');
/** The well-known NAT64 prefix (RFC 6052): its last 32 bits are the IPv4 address reached. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** Names for this machine or a private network by convention (RFC 6761, RFC 6762, ICANN). */
const LOCAL_NAMES = ['localhost', 'internal', 'local'];

/**
 * Where webhooks may be sent (docs/security.md, "Webhook targets (SSRF)"): `https` to public
 * addresses only, unless `WEBHOOK_ALLOW_PRIVATE_TARGETS` lets a development receiver in.
 */
@Injectable()
export class WebhookTargetPolicy {
  readonly allowsPrivateTargets: boolean;

  constructor(config: AppConfig) {
    this.allowsPrivateTargets = config.webhookAllowPrivateTargets;
  }

  /**
   * Why a subscription's URL is refused, as a 400 message, or undefined when it is acceptable.
   * A host name passes here; the addresses it resolves to are checked on every connection.
   */
  checkUrl(url: string): string | undefined {
    const target = URL.canParse(url) ? new URL(url) : undefined;
    if (!target) return 'url must be an absolute URL';
    if (!this.allowedSchemes().includes(target.protocol)) {
      return `url must be ${this.allowsPrivateTargets ? 'an http or https' : 'an https'} URL`;
    }
    if (target.username || target.password) return 'url must not contain a user name or password';
    if (this.allowsPrivateTargets) return undefined;
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) {
      return this.isPublicAddress(host)
        ? undefined
        : 'url must not point to a loopback, private or otherwise non-public address';
    }
    return isLocalName(host)
      ? 'url must not name a local host (localhost, *.localhost, *.internal, *.local)'
      : undefined;
  }

  /** Whether a connection to this resolved address may be made. */
  allowsAddress(address: string): boolean {
    return this.allowsPrivateTargets || this.isPublicAddress(address);
  }

  /**
   * Whether an IP address is publicly routable: IPv4 in no special-purpose range of ipaddr.js
   * (an IPv4-mapped IPv6 address counts as its IPv4), IPv6 global unicast in no special range,
   * or the well-known NAT64 prefix around a public IPv4. 6to4 and Teredo are refused outright.
   */
  isPublicAddress(address: string): boolean {
    if (!isIP(address)) return false;
    const ip = ipaddr.process(address);
    if (ip instanceof ipaddr.IPv4) return ip.range() === 'unicast';
    if (ip.match(NAT64_WELL_KNOWN)) {
      return this.isPublicAddress(ipaddr.fromByteArray(ip.toByteArray().slice(12)).toString());
    }
    return ip.range() === 'unicast' && ip.match(GLOBAL_UNICAST_IPV6);
  }

  private allowedSchemes(): readonly string[] {
    return this.allowsPrivateTargets ? ['https:', 'http:'] : ['https:'];
  }
}

function isLocalName(host: string): boolean {
  const name = host.replace(/\.$/, '');
  return LOCAL_NAMES.some((local) => name === local || name.endsWith(`.${local}`));
}
