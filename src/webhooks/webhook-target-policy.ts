import { Injectable } from '@nestjs/common';

/**
 * Which URLs a webhook may be sent to, asked when a subscription is created. The one place the
 * server-side request forgery rules belong (docs/security.md, API7): https only and public
 * addresses unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true. Not built yet: this policy accepts every
 * http and https URL.
 */
@Injectable()
export class WebhookTargetPolicy {
  /** Why `url` may not be a webhook target, as a message for the client; undefined: it may. */
  refusal(url: URL): Promise<string | undefined> {
    const allowed = url.protocol === 'https:' || url.protocol === 'http:';
    return Promise.resolve(allowed ? undefined : 'url must use http or https');
  }
}
