import { describe, expect, it } from 'vitest';
import {
  canTransition,
  describeTransitions,
  invalidTransitionMessage,
} from '../../../src/pets/pet-lifecycle.js';

describe('the status lifecycle', () => {
  it.each([
    [null, 'available', true],
    [null, 'pending', true],
    [null, 'sold', true],
    ['available', 'available', false],
    ['available', 'pending', true],
    ['available', 'sold', true],
    ['pending', 'available', true],
    ['pending', 'pending', false],
    ['pending', 'sold', true],
    ['sold', 'available', false],
    ['sold', 'pending', false],
    ['sold', 'sold', false],
  ] as const)('%s → %s: %s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
  });

  it('names the current status and the allowed targets in the 409 message', () => {
    expect(invalidTransitionMessage(7, 'available', 'available')).toBe(
      'Pet 7 is available: its status can change to pending or sold, not to available',
    );
    expect(invalidTransitionMessage(7, 'pending', 'pending')).toBe(
      'Pet 7 is pending: its status can change to available or sold, not to pending',
    );
    expect(invalidTransitionMessage(7, 'sold', 'pending')).toBe(
      'Pet 7 is sold: its status can no longer change (asked for pending)',
    );
  });

  it('describes the table as Markdown for the OpenAPI document', () => {
    expect(describeTransitions()).toBe(
      [
        '| from \\ to | available | pending | sold |',
        '|---|---|---|---|',
        '| (none) | yes | yes | yes |',
        '| available | – | yes | yes |',
        '| pending | yes | – | yes |',
        '| sold | – | – | – |',
      ].join('\n'),
    );
  });
});
