/**
 * The failure of a host name that does not resolve and of one that resolves to an address the
 * policy refuses: one class for both, so a client learns nothing of the store's network from a
 * webhook's failures (docs/security.md, "Webhook targets (SSRF)").
 */
export const NO_PUBLIC_ADDRESS = 'host not found or not public';

/**
 * A delivery the target policy stopped before any connection was made (docs/security.md,
 * "Webhook targets (SSRF)"). `errorClass` lets the sender record it apart from network failures:
 * `target_refused` for the URL's own scheme or address, NO_PUBLIC_ADDRESS for its host name.
 */
export class WebhookTargetRefusedError extends Error {
  constructor(
    message: string,
    readonly errorClass = 'target_refused',
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'WebhookTargetRefusedError';
  }
}
