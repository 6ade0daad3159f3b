import { describe, expect, it } from 'vitest';
import { isName } from '../../../src/http/name-rules.js';

describe('isName', () => {
  it.each([
    ['a single character', 'x'],
    ['255 characters', 'x'.repeat(255)],
    ['255 emoji (each one code point, two UTF-16 units)', '🐶'.repeat(255)],
    ['surrounding whitespace', ' Rex '],
    ['mixed scripts', 'Ünïcødé 🐶 名前'],
  ])('accepts %s', (_label, name) => {
    expect(isName(name)).toBe(true);
  });

  it.each([
    ['the empty string', ''],
    ['256 characters', 'x'.repeat(256)],
    ['256 emoji', '🐶'.repeat(256)],
    ['spaces only', '   '],
    ['tabs and newlines only', '\t\n\r'],
    ['no-break spaces only', '\u00a0\u00a0'],
    ['a U+0000', 'Re\u0000x'],
    ['a lone high surrogate', 'Rex\ud800'],
    ['a lone low surrogate', '\udc00Rex'],
  ])('rejects %s', (_label, name) => {
    expect(isName(name)).toBe(false);
  });

  it.each([undefined, null, 42, true, ['Rex'], { name: 'Rex' }])(
    'rejects the non-string %j',
    (value) => {
      expect(isName(value)).toBe(false);
    },
  );
});
