import { describe, expect, it } from 'vitest';
import { inTurn } from '../../../bench/lib/servers.mjs';

describe('inTurn', () => {
  it('starts the contenders as listed in odd rounds and reversed in even ones', () => {
    const contenders = ['service', 'reference'];
    expect([1, 2, 3, 4].map((round) => inTurn(contenders, round))).toEqual([
      ['service', 'reference'],
      ['reference', 'service'],
      ['service', 'reference'],
      ['reference', 'service'],
    ]);
  });

  it('reverses three contenders in even rounds, leaving their list as it was', () => {
    const contenders = ['service', 'metrics', 'tracing'];
    expect(inTurn(contenders, 2)).toEqual(['tracing', 'metrics', 'service']);
    expect(contenders).toEqual(['service', 'metrics', 'tracing']);
  });

  it('leaves a lone contender alone', () => {
    expect(inTurn(['service'], 2)).toEqual(['service']);
  });
});
