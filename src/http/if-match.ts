import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { validationFailed } from '../errors/api-error.js';
import { parseEntityTags } from './entity-tags.js';
import { requestOf } from './http-context.js';

/**
 * An If-Match condition (RFC 9110 §13.1.1): `*`, any current representation, or the strong tags it
 * lists. Weak tags are left out: If-Match compares strongly, so they never match.
 */
export type IfMatch = '*' | readonly string[];

/** Whether a resource whose current ETag is `etag` meets the condition; no condition always does. */
export function ifMatchAllows(condition: IfMatch | undefined, etag: string): boolean {
  return condition === undefined || condition === '*' || condition.includes(etag);
}

/**
 * The request's If-Match, undefined when absent. A malformed or empty one is a 400 rather than no
 * condition: the client asked for a safe write, and ignoring the field would make it unsafe.
 */
export const IfMatchHeader = createParamDecorator(
  (_data: unknown, context: ExecutionContext): IfMatch | undefined => {
    const value = requestOf(context).headers['if-match'];
    if (value === undefined) return undefined;
    const tags = parseEntityTags(value);
    if (tags === '*') return tags;
    if (tags === undefined || tags.length === 0) {
      throw validationFailed(
        'If-Match must be * or a comma-separated list of entity tags, such as "42-3"',
      );
    }
    return tags.filter((tag) => !tag.weak).map((tag) => tag.opaque);
  },
);
