/**
 * Printable ASCII, space to tilde, at least one character: the alphabet of text clients choose
 * that is echoed in headers, logs or a terminal (API key names, Idempotency-Key values). Written
 * as a JSON Schema `pattern` so the OpenAPI document states the same rule the code applies.
 */
export const PRINTABLE_ASCII_PATTERN = '^[\\x20-\\x7E]+$';

const PRINTABLE_ASCII = new RegExp(PRINTABLE_ASCII_PATTERN);

/** Whether `text` is 1 to `maxLength` printable ASCII characters. */
export function isPrintableAscii(text: string, maxLength: number): boolean {
  return text.length <= maxLength && PRINTABLE_ASCII.test(text);
}
