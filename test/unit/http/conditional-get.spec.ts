import { describe, expect, it } from 'vitest';
import { entityTagOf, ifNoneMatchMatches } from '../../../src/http/conditional-get.js';

describe('ifNoneMatchMatches', () => {
  const etag = 'W/"abc"';

  it.each(['W/"abc"', '"abc"', '*', '"x", W/"abc"', 'W/"x",  "abc" ', ',"abc",'])(
    'matches %j (weak comparison)',
    (value) => {
      expect(ifNoneMatchMatches(value, etag)).toBe(true);
    },
  );

  it.each([undefined, '', 'W/"abd"', '"ABC"', '"abc" x', 'abc', '*, "abc"', '"ab", "bc"'])(
    'does not match %j',
    (value) => {
      expect(ifNoneMatchMatches(value, etag)).toBe(false);
    },
  );

  it('compares a strong ETag weakly too', () => {
    expect(ifNoneMatchMatches('W/"abc"', '"abc"')).toBe(true);
  });
});

describe('entityTagOf', () => {
  it('is a weak tag of 27 base64url characters, a function of the body and the link alone', () => {
    const tag = entityTagOf('[{"id":1}]', undefined);
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(entityTagOf('[{"id":1}]', undefined)).toBe(tag);
  });

  it('changes with the body and with the Link header', () => {
    const tags = new Set([
      entityTagOf('[{"id":1}]', undefined),
      entityTagOf('[{"id":2}]', undefined),
      entityTagOf('[{"id":1}]', '</v1/pets?limit=1&cursor=YWZ0ZXI6MQ>; rel="next"'),
      entityTagOf('[{"id":1}]', '</v1/pets?limit=1&cursor=YWZ0ZXI6Mg>; rel="next"'),
    ]);
    expect(tags.size).toBe(4);
  });
});
