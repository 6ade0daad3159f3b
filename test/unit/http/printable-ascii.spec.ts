import { describe, expect, it } from 'vitest';
import { isPrintableAscii, PRINTABLE_ASCII_PATTERN } from '../../../src/http/printable-ascii.js';

describe('isPrintableAscii', () => {
  it.each(['a', ' ', '~', 'order-4711', 'x'.repeat(10)])('accepts %j', (text) => {
    expect(isPrintableAscii(text, 10)).toBe(true);
  });

  it.each(['', 'x'.repeat(11), 'tab\there', 'new\nline', 'del\x7f', 'café', '\u0000'])(
    'refuses %j',
    (text) => {
      expect(isPrintableAscii(text, 10)).toBe(false);
    },
  );

  it('states the same alphabet as the OpenAPI pattern', () => {
    const pattern = new RegExp(PRINTABLE_ASCII_PATTERN);
    for (let code = 0; code < 0x100; code++) {
      const text = String.fromCharCode(code);
      expect(isPrintableAscii(text, 1)).toBe(pattern.test(text));
    }
  });
});
