/** An entity tag as a request names it: the quoted opaque-tag, and whether it had the `W/` prefix. */
export interface EntityTag {
  opaque: string;
  weak: boolean;
}

/** `W/"…"` or `"…"`: the opaque-tag is the quoted part, any of %x21 / %x23-7E / obs-text. */
const ENTITY_TAG = /(W\/)?("[\x21\x23-\x7e\x80-\xff]*")/y;

/**
 * The value of an If-Match or If-None-Match field: `*`, a list of entity tags, or undefined when
 * malformed (RFC 9110 §13.1.1-2; lists as §5.6.1, empty elements allowed; a quoted comma belongs
 * to the tag).
 */
export function parseEntityTags(value: string): '*' | EntityTag[] | undefined {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < value.length) {
    const char = value[at];
    if (char === ',' || char === ' ' || char === '\t') {
      at += 1;
      continue;
    }
    ENTITY_TAG.lastIndex = at;
    const tag = ENTITY_TAG.exec(value);
    if (tag === null) return undefined;
    tags.push({ opaque: tag[2], weak: tag[1] !== undefined });
    at = ENTITY_TAG.lastIndex;
    while (value[at] === ' ' || value[at] === '\t') at += 1;
    if (at < value.length && value[at] !== ',') return undefined;
  }
  return tags;
}
