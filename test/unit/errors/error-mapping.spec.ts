import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
  PayloadTooLargeException,
  ServiceUnavailableException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import { toApiError } from '../../../src/errors/error-mapping.js';

const LIMIT = 16384;

const INTERNAL = { code: 'INTERNAL_ERROR', message: 'Internal server error', status: 500 };
const DB_UNAVAILABLE = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The database is unavailable; retry later',
  status: 503,
};
const TOO_LARGE = {
  code: 'PAYLOAD_TOO_LARGE',
  message: `Request body exceeds ${LIMIT} bytes`,
  status: 413,
};
const UNSUPPORTED = {
  code: 'UNSUPPORTED_MEDIA_TYPE',
  message: 'Content-Type must be application/json',
  status: 415,
};

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/** A Fastify-style error: a plain Error carrying statusCode and an FST_ code. */
const fastifyError = (message: string, statusCode: number, code: string) =>
  Object.assign(new Error(message), { statusCode, code });

describe('toApiError', () => {
  it('keeps a client error a client error even when its message reads like a database outage', () => {
    const mapped = toApiError(new BadRequestException('Connection terminated'), LIMIT);
    expect(mapped.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'The request is malformed',
      status: 400,
    });
  });

  it('passes an ApiError through as the same instance', () => {
    const error = new ApiError('NOT_FOUND', 'No pet with id 7', { 'X-Extra': 'y' });
    expect(toApiError(error, LIMIT)).toBe(error);
  });

  describe('Nest HTTP exceptions', () => {
    it.each([
      [
        'BadRequestException',
        new BadRequestException('name must be a string'),
        { code: 'VALIDATION_FAILED', message: 'The request is malformed', status: 400 },
      ],
      ['PayloadTooLargeException', new PayloadTooLargeException('too big'), TOO_LARGE],
      [
        'UnsupportedMediaTypeException',
        new UnsupportedMediaTypeException('text/plain'),
        UNSUPPORTED,
      ],
      [
        'HttpException 404',
        new HttpException('Cannot GET /x', 404),
        { code: 'NOT_FOUND', message: 'The requested resource could not be found', status: 404 },
      ],
      ['ServiceUnavailableException', new ServiceUnavailableException('draining'), DB_UNAVAILABLE],
      [
        'HttpException 418',
        new HttpException("I'm a teapot", 418),
        { code: 'VALIDATION_FAILED', message: 'The request is malformed', status: 400 },
      ],
      [
        'HttpException 403',
        new HttpException('Forbidden resource', 403),
        {
          code: 'FORBIDDEN',
          message: 'This API key may not perform this operation',
          status: 403,
        },
      ],
      [
        'HttpException 429',
        new HttpException('ThrottlerException: Too Many Requests', 429),
        {
          code: 'RATE_LIMITED',
          message:
            'The API key exceeded its request budget, or the client address had too many failed authentications; retry after Retry-After seconds.',
          status: 429,
        },
      ],
      [
        'HttpException 405',
        new HttpException('Method Not Allowed', 405),
        {
          code: 'METHOD_NOT_ALLOWED',
          message: 'The path exists but not with this method; see the Allow header.',
          status: 405,
        },
      ],
    ])('maps %s to its own fixed body', (_label, exception, body) => {
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(body);
      expect(error.getStatus()).toBe(body.status);
    });

    it('gives a NotFoundException the fixed NOT_FOUND message, never its own text', () => {
      expect(toApiError(new NotFoundException('Cannot GET /internal'), LIMIT).body).toEqual({
        code: 'NOT_FOUND',
        message: 'The requested resource could not be found',
        status: 404,
      });
    });

    it('gives a 401 from anywhere the WWW-Authenticate challenge', () => {
      const error = toApiError(new HttpException('Unauthorized', 401), LIMIT);
      expect(error.body).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401 });
      expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="animal-store"' });
    });

    it('names the configured limit in the 413 message', () => {
      expect(toApiError(new PayloadTooLargeException(), 1024).body.message).toBe(
        'Request body exceeds 1024 bytes',
      );
    });

    it('asks the client to retry after 1 second on a 503', () => {
      expect(toApiError(new ServiceUnavailableException(), LIMIT).headers).toEqual({
        'Retry-After': '1',
      });
    });

    it('sends no extra headers on a 4xx', () => {
      expect(toApiError(new BadRequestException(), LIMIT).headers).toEqual({});
    });
  });

  describe('Fastify errors (statusCode property)', () => {
    it('maps a body-too-large error to 413 without echoing the framework message', () => {
      const exception = fastifyError(
        'FST_ERR_CTP_BODY_TOO_LARGE Request body is too large',
        413,
        'FST_ERR_CTP_BODY_TOO_LARGE',
      );
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(TOO_LARGE);
      expect(error.getStatus()).toBe(413);
      expect(JSON.stringify(error.body)).not.toContain('FST_');
    });

    it('maps an invalid-media-type error to 415 without echoing the framework message', () => {
      const exception = fastifyError(
        'FST_ERR_CTP_INVALID_MEDIA_TYPE Unsupported Media Type: text/plain',
        415,
        'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      );
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(UNSUPPORTED);
      expect(error.getStatus()).toBe(415);
      expect(JSON.stringify(error.body)).not.toContain('FST_');
      expect(JSON.stringify(error.body)).not.toContain('text/plain');
    });

    it('maps a non-Error object with a 4xx statusCode to a 400', () => {
      expect(toApiError({ statusCode: 400, message: 'bad' }, LIMIT).body).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'The request is malformed',
        status: 400,
      });
    });

    it.each([
      ['a 5xx other than 503', 502],
      ['a 3xx', 302],
    ])('treats %s statusCode as our fault', (_label, statusCode) => {
      expect(toApiError(fastifyError('upstream', statusCode, 'X'), LIMIT).body).toEqual(INTERNAL);
    });

    it('ignores a statusCode that is not a number', () => {
      expect(toApiError(fastifyError('odd', Number.NaN, 'X'), LIMIT).body).toEqual(INTERNAL);
      expect(
        toApiError(Object.assign(new Error('odd'), { statusCode: '413' }), LIMIT).body,
      ).toEqual(INTERNAL);
    });
  });

  describe('anything else is an internal error', () => {
    it.each([
      ['a plain Error', new Error('boom at /srv/app/src/pets.service.ts:12')],
      ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
      ['a string', 'boom'],
      ['undefined', undefined],
      ['null', null],
      ['an HttpException with status 500', new HttpException('secret detail', 500)],
      ['an InternalServerErrorException', new InternalServerErrorException('secret detail')],
    ])('maps %s to INTERNAL_ERROR with a fixed message', (_label, exception) => {
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(INTERNAL);
      expect(error.getStatus()).toBe(500);
      expect(error.headers).toEqual({});
    });
  });

  describe('database errors', () => {
    it.each([
      ['ECONNREFUSED', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
      [
        'PostgreSQL admin_shutdown (57P01)',
        withCode('terminating connection due to administrator command', '57P01'),
      ],
      [
        'a QueryFailedError whose driver error is a connection failure (08006)',
        Object.assign(new Error('connection failure'), {
          name: 'QueryFailedError',
          driverError: withCode('connection failure', '08006'),
        }),
      ],
      [
        'a "Connection terminated unexpectedly" Error without a code',
        new Error('Connection terminated unexpectedly'),
      ],
      ['SQLITE_BUSY', withCode('database is locked', 'SQLITE_BUSY')],
    ])('maps %s to 503 SERVICE_UNAVAILABLE with Retry-After: 1', (_label, exception) => {
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(DB_UNAVAILABLE);
      expect(error.getStatus()).toBe(503);
      expect(error.headers).toEqual({ 'Retry-After': '1' });
    });

    it('maps an SQL syntax error to INTERNAL_ERROR without leaking the SQL', () => {
      const exception = withCode(
        'syntax error at or near "FORM" in SELECT id, name FORM pets WHERE id = $1',
        '42601',
      );
      const error = toApiError(exception, LIMIT);
      expect(error.body).toEqual(INTERNAL);
      expect(error.getStatus()).toBe(500);
      expect(JSON.stringify(error.body)).not.toMatch(/SELECT|FORM|pets/);
    });

    it('maps a unique-constraint violation (23505) to INTERNAL_ERROR', () => {
      expect(
        toApiError(
          withCode('duplicate key value violates unique constraint "pets_pkey"', '23505'),
          LIMIT,
        ).body,
      ).toEqual(INTERNAL);
    });
  });
});
