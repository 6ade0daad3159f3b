import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiResponse, type HeaderObject, type HeadersObject } from '@nestjs/swagger';
import { CACHEABLE_CACHE_CONTROL, entityTagOf } from './conditional-get.js';

/** The ETag of an answer whose tag `answerConditionally` computes from the body. */
export const COMPUTED_ETAG: HeaderObject = {
  description:
    'Weak validator of this answer, computed from its body and Link header: the same data gives ' +
    'the same ETag on every server. Send it back in `If-None-Match`.',
  schema: { type: 'string', example: entityTagOf('[]', undefined) },
};

/** The validator headers of a 200 (and its 304) on a route with an ETag. */
export const validatorHeaders = (etag: HeaderObject): HeadersObject => ({
  ETag: etag,
  'Cache-Control': {
    description:
      'A client cache may keep the answer but must revalidate it (`If-None-Match`) before each ' +
      'use; shared caches must not keep it. Every other answer is `no-store`.',
    schema: { type: 'string', enum: [CACHEABLE_CACHE_CONTROL] },
  },
});

/**
 * Documents a conditional GET: the If-None-Match parameter and the 304 answer, which carries the
 * 200's headers (`headers`: those besides the validators) and no body.
 */
export const ApiConditionalGet = (headers: HeadersObject, etag: HeaderObject = COMPUTED_ETAG) =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description:
        'The `ETag` of an answer you hold (a list of them, or `*`). When it still matches, the ' +
        'answer is 304 Not Modified without a body: keep using what you have.',
      schema: { type: 'string' },
    }),
    ApiResponse({
      status: 304,
      description:
        'Not Modified: `If-None-Match` matches the current answer. No body; the headers are those ' +
        'of the 200.',
      headers: { ...validatorHeaders(etag), ...headers },
    }),
  );
