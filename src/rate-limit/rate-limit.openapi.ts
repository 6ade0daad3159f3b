import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeadersObject } from '@nestjs/swagger';
import { errorContent } from '../errors/api-error-responses.js';
import { ERROR_CODES } from '../errors/error-codes.js';

const integer = { type: 'integer', minimum: 0 } as const;

/** The budget headers every authenticated response carries while rate limiting is on. */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'RateLimit-Limit': {
    description: 'Requests this API key may make per minute (`RATE_LIMIT_PER_MINUTE`).',
    schema: { ...integer, example: 600 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { ...integer, example: 599 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the window resets.',
    schema: { ...integer, example: 60 },
  },
};

/** Documents the 429 answer, with when to retry. */
export const ApiRateLimitedResponse = () =>
  applyDecorators(
    ApiResponse({
      status: 429,
      description: `\`RATE_LIMITED\`: ${ERROR_CODES.RATE_LIMITED.meaning}`,
      content: errorContent(429),
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before the next request is accepted.',
          schema: { ...integer, example: 42 },
        },
        ...RATE_LIMIT_HEADERS,
      },
    }),
  );
