import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { WebhookTargetPolicy } from './webhook-target-policy.js';
import { NO_PUBLIC_ADDRESS, WebhookTargetRefusedError } from './webhook-target-refused.error.js';

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

/**
 * dns.lookup, failing when the name does not resolve or any address of it is one the policy
 * refuses, with one error class for both: told apart, a client could map internal DNS by trying
 * names. Only the message and cause, which no client reads, say which; neither has an address.
 */
function guardedLookup(policy: WebhookTargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        const message = `webhook target ${hostname} does not resolve`;
        return callback(noPublicAddress(message, error), []);
      }
      if (!addresses.every(({ address }) => policy.allowsAddress(address))) {
        const message = `webhook target ${hostname} resolves to a non-public address`;
        return callback(noPublicAddress(message), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

function noPublicAddress(message: string, cause?: Error): WebhookTargetRefusedError {
  return new WebhookTargetRefusedError(message, NO_PUBLIC_ADDRESS, cause && { cause });
}
