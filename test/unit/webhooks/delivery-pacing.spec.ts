import { describe, expect, it } from 'vitest';
import { CLIENTS_QUEUEING, pauseAfterBatch } from '../../../src/webhooks/delivery-pacing.js';

describe('pauseAfterBatch', () => {
  it('does not pause while fewer requests than the queueing mark are in flight', () => {
    expect(pauseAfterBatch(40, 0)).toBe(0);
    expect(pauseAfterBatch(40, CLIENTS_QUEUEING - 1)).toBe(0);
  });

  it('pauses twice as long as the batch took once clients queue', () => {
    expect(pauseAfterBatch(40, CLIENTS_QUEUEING)).toBe(80);
    expect(pauseAfterBatch(12.5, 200)).toBe(25);
  });

  it('pauses at most a second, so a saturated instance still delivers', () => {
    expect(pauseAfterBatch(600, CLIENTS_QUEUEING)).toBe(1_000);
  });
});
