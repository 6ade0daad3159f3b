/** URL text for the hostile-input suites: ids and queries percent-encoded one way or another. */

/** `text` percent-encoded as a browser would, or every byte of it when `everyByte` is set. */
export function percentEncoded(text: string, everyByte: boolean): string {
  if (!everyByte) return encodeURIComponent(text);
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/** A path as the router compares it, or the path as it is when it does not decode. */
export function decodedPath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
