import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { WebhookTargetPolicy } from './webhook-target-policy.js';
import { WebhookTargetRefusedError } from './webhook-target-refused.error.js';

/**
 * undici's own connector, checking the address it is about to connect to: a host name through the
 * socket's `lookup`, so every address a name resolves to is checked on every connection (against
 * DNS rebinding), and an address literal before the socket is made. TLS keeps the URL's host name
 * as SNI and for the certificate check.
 */
export function guardedConnector(policy: WebhookTargetPolicy): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup(policy) });
  return (target, callback) => {
    const refusal = refuseTarget(policy, target);
    if (refusal) callback(refusal, null);
    else connect(target, callback);
  };
}

function refuseTarget(
  policy: WebhookTargetPolicy,
  { protocol, hostname }: buildConnector.Options,
): WebhookTargetRefusedError | undefined {
  if (protocol !== 'https:' && !policy.allowsPrivateTargets) {
    return new WebhookTargetRefusedError(`webhook target ${hostname} must be reached over https`);
  }
  if (isIP(hostname) && !policy.allowsAddress(hostname)) {
    return new WebhookTargetRefusedError(`webhook target ${hostname} is not a public address`);
  }
  return undefined;
}

/** dns.lookup, failing when any address of the name is one the policy refuses. */
function guardedLookup(policy: WebhookTargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      // No address in the message: it may reach clients, who could map internal DNS with it.
      if (!addresses.every(({ address }) => policy.allowsAddress(address))) {
        const message = `webhook target ${hostname} resolves to a non-public address`;
        return callback(new WebhookTargetRefusedError(message), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
