/**
 * A delivery the target policy stopped before any connection was made (docs/security.md,
 * "Webhook targets (SSRF)"). `errorClass` lets the sender record it apart from network failures.
 */
export class WebhookTargetRefusedError extends Error {
  readonly errorClass = 'target_refused';

  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetRefusedError';
  }
}
