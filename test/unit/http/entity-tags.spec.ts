import { describe, expect, it } from 'vitest';
import { parseEntityTags } from '../../../src/http/entity-tags.js';

const strong = (opaque: string) => ({ opaque, weak: false });
const weak = (opaque: string) => ({ opaque, weak: true });

describe('parseEntityTags', () => {
  it.each([
    ['*', '*'],
    [' \t* ', '*'],
    ['"a"', [strong('"a"')]],
    ['W/"a"', [weak('"a"')]],
    ['""', [strong('""')]],
    ['"a", W/"b",  "c"', [strong('"a"'), weak('"b"'), strong('"c"')]],
    ['"a",W/"b"', [strong('"a"'), weak('"b"')]],
    [', ,"a",,\t"b" ,', [strong('"a"'), strong('"b"')]],
    ['"a,b", "c"', [strong('"a,b"'), strong('"c"')]],
    ['"x!#~\u0080\u00ff"', [strong('"x!#~\u0080\u00ff"')]],
    ['', []],
    [' , ', []],
  ])('reads %j as %j', (value, expected) => {
    expect(parseEntityTags(value)).toEqual(expected);
  });

  it.each([
    'a',
    'W/a',
    'w/"a"',
    'W/ "a"',
    '"a',
    '"a""b"',
    '"a" "b"',
    '"a" b',
    '"a b"',
    '"a\\"b"',
    '"a\u0001"',
    '"\u20ac"',
    '*, "a"',
    '"a", *',
    '**',
  ])('refuses the malformed %j', (value) => {
    expect(parseEntityTags(value)).toBeUndefined();
  });
});
