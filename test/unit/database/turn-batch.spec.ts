import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../../../src/database/turn-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatch', () => {
  it('runs the items added in one turn together, and gives each caller its own result', async () => {
    const runs: number[][] = [];
    const batch = new TurnBatch((items: number[]) => {
      runs.push(items);
      return Promise.resolve(items.map((item) => item * 10));
    });

    const results = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);

    expect(runs).toEqual([[1, 2, 3]]);
    expect(results).toEqual([10, 20, 30]);
  });

  it('runs the items of a later turn as a batch of their own', async () => {
    const runs: string[][] = [];
    const batch = new TurnBatch((items: string[]) => {
      runs.push(items);
      return Promise.resolve(items);
    });

    const first = batch.add('a');
    await nextTurn();
    const second = Promise.all([batch.add('b'), batch.add('c')]);

    expect(await first).toBe('a');
    expect(await second).toEqual(['b', 'c']);
    expect(runs).toEqual([['a'], ['b', 'c']]);
  });

  it("fails every caller of a batch whose run fails, and not the next batch's", async () => {
    let fail = true;
    const batch = new TurnBatch((items: number[]) =>
      fail ? Promise.reject(new Error('refused')) : Promise.resolve(items),
    );

    const failed = [batch.add(1), batch.add(2)].map((result) =>
      result.then(
        () => 'resolved',
        (error: Error) => error.message,
      ),
    );
    expect(await Promise.all(failed)).toEqual(['refused', 'refused']);
    fail = false;
    expect(await batch.add(3)).toBe(3);
  });
});
