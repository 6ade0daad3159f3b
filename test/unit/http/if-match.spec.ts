import { describe, expect, it } from 'vitest';
import { ifMatchAllows } from '../../../src/http/if-match.js';

describe('ifMatchAllows', () => {
  it.each([
    [undefined, true],
    ['*', true],
    [['"1-2"'], true],
    [['"9-9"', '"1-2"'], true],
    [['"1-1"'], false],
    [[], false],
  ] as const)('%j against "1-2": %s', (condition, allowed) => {
    expect(ifMatchAllows(condition, '"1-2"')).toBe(allowed);
  });
});
