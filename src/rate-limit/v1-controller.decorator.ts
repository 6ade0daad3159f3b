import { applyDecorators, Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../errors/api-error-responses.js';
import { ApiRateLimitedResponse } from './rate-limit.openapi.js';

/**
 * A controller of the versioned API, at `/v1/<path>`, its operations under `tag` in the OpenAPI
 * document. Every operation of one passes the API-key guard and then the rate limit, and reads or
 * writes the database, so each documents the 401, the 429, and the 500 and 503 they may answer.
 * It lives on the rate limit's floor, the lowest that knows all four (docs/architecture.md).
 */
export const V1Controller = (path: string, tag: string) =>
  applyDecorators(
    ApiTags(tag),
    ApiErrorResponses(401),
    ApiRateLimitedResponse(),
    ApiErrorResponses(500, 503),
    Controller({ path, version: '1' }),
  );
