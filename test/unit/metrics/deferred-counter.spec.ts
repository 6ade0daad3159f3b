import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DeferredCounter } from '../../../src/metrics/deferred-counter.js';

/** The counter's sample lines in a scrape of `registry`. */
async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith('calls_total{'));
}

describe('DeferredCounter', () => {
  it('adds what was counted since the last scrape, once, by both labels', async () => {
    const registry = new Registry();
    const calls = new DeferredCounter('calls_total', 'Calls.', ['operation', 'api_key'], registry);
    calls.inc('getPet', 'till');
    calls.inc('getPet', 'till');
    calls.inc('getPet', 'shop "front"');
    calls.inc('listPets', 'till');

    expect(await samples(registry)).toEqual([
      'calls_total{operation="getPet",api_key="till"} 2',
      'calls_total{operation="getPet",api_key="shop \\"front\\""} 1',
      'calls_total{operation="listPets",api_key="till"} 1',
    ]);
    expect(await samples(registry)).toEqual([
      'calls_total{operation="getPet",api_key="till"} 2',
      'calls_total{operation="getPet",api_key="shop \\"front\\""} 1',
      'calls_total{operation="listPets",api_key="till"} 1',
    ]);

    calls.inc('getPet', 'till');
    expect(await samples(registry)).toContain('calls_total{operation="getPet",api_key="till"} 3');
  });

  it('shows no series before the first count', async () => {
    const registry = new Registry();
    new DeferredCounter('calls_total', 'Calls.', ['operation', 'api_key'], registry);
    expect(await samples(registry)).toEqual([]);
  });
});
