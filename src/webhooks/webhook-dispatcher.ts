import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Agent } from 'undici';
import { guardedConnector } from './guarded-connector.js';
import { WebhookTargetPolicy } from './webhook-target-policy.js';

/**
 * The undici dispatcher webhook deliveries go through: every connection it opens passes the target
 * policy, and a refusal rejects the request with a `WebhookTargetRefusedError`. undici's
 * `request()` follows no redirects, so a 3xx is the receiver's answer, never a second target.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationShutdown {
  /** Pass as `dispatcher` to undici's `request()`. */
  readonly agent: Agent;

  constructor(policy: WebhookTargetPolicy) {
    this.agent = new Agent({ connect: guardedConnector(policy) });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
