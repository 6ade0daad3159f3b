import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import type { ChangeNotifications } from '../../../src/database/change-notifications.js';
import type { PetEventsRepository } from '../../../src/events/pet-events.repository.js';
import { RequestsInFlight } from '../../../src/http/requests-in-flight.js';
import { Clock } from '../../../src/time/clock.js';
import type { WebhookDeliveriesRepository } from '../../../src/webhooks/webhook-deliveries.repository.js';
import { WebhookDeliveryWorker } from '../../../src/webhooks/webhook-delivery-worker.js';
import type { WebhookMetrics } from '../../../src/webhooks/webhook-metrics.js';
import type { WebhookSender } from '../../../src/webhooks/webhook-sender.js';

/** The worker over a store whose first look for an enabled webhook answers `firstLook`. */
function workerWith(firstLook: Promise<boolean>) {
  const commitListeners: (() => void)[] = [];
  const claimDue = vi.fn(() => Promise.resolve([]));
  const deliveries = {
    hasEnabledSubscription: vi.fn(() => firstLook),
    claimDue,
  } as unknown as WebhookDeliveriesRepository;
  const events = {
    onCommitted: (listener: () => void) => commitListeners.push(listener),
  } as unknown as PetEventsRepository;
  const notifications = { listen: () => {} } as unknown as ChangeNotifications;
  const worker = new WebhookDeliveryWorker(
    deliveries,
    events,
    {} as WebhookSender,
    notifications,
    loadConfig({}),
    new Clock(),
    {} as WebhookMetrics,
    new RequestsInFlight(),
  );
  const commit = () => commitListeners.forEach((listener) => listener());
  return { worker, claimDue, commit };
}

const started: WebhookDeliveryWorker[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((worker) => worker.beforeApplicationShutdown()));
});

describe('WebhookDeliveryWorker, before and after its first look', () => {
  it('runs no pass for a commit made before the first look has answered', async () => {
    const { worker, claimDue, commit } = workerWith(new Promise(() => {}));
    worker.onApplicationBootstrap();
    started.push(worker);

    commit();
    await new Promise((resolve) => setTimeout(resolve, 20));

    expect(claimDue).not.toHaveBeenCalled();
  });

  it('runs a pass once the first look finds an enabled webhook, and for the commits after it', async () => {
    const { worker, claimDue, commit } = workerWith(Promise.resolve(true));
    worker.onApplicationBootstrap();
    started.push(worker);

    await vi.waitFor(() => expect(claimDue).toHaveBeenCalledTimes(1));
    await new Promise((resolve) => setTimeout(resolve, 60));
    commit();
    // Well inside the worker's 1 s poll, which would run a pass without the commit.
    await vi.waitFor(() => expect(claimDue).toHaveBeenCalledTimes(2), { timeout: 300 });
  });
});
