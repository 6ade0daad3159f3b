import {
  type ArgumentsHost,
  HttpException,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AllExceptionsFilter } from '../../../src/errors/all-exceptions.filter.js';
import type { AppConfig } from '../../../src/config/app-config.js';
import { RouteTable } from '../../../src/http/route-table.js';

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** What the filter sees of a request: Fastify's 404 state and the route that matched, if any. */
interface RequestState {
  method: string;
  url: string;
  is404: boolean;
  route?: string;
}

function handle(filter: AllExceptionsFilter, exception: unknown, state: RequestState) {
  const answer: Answer = { headers: {} };
  const log = { error: vi.fn() };
  const request = { ...state, routeOptions: { url: state.route }, log };
  const reply = {
    sent: false,
    status(code: number) {
      answer.status = code;
      return reply;
    },
    headers(values: Record<string, string>) {
      Object.assign(answer.headers, values);
      return reply;
    },
    type() {
      return reply;
    },
    send(body: unknown) {
      answer.body = body;
      return reply;
    },
  };
  const host = {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ArgumentsHost;
  filter.catch(exception, host);
  return { answer, log };
}

/** What Nest's not-found handler throws for a request Fastify could not route. */
const routerMiss = (method: string, url: string) =>
  new NotFoundException(`Cannot ${method} ${url}`);

describe('AllExceptionsFilter', () => {
  let filter: AllExceptionsFilter;

  beforeEach(() => {
    const routes = new RouteTable();
    routes.add(['GET', 'HEAD'], '/v1/pets');
    routes.add('POST', '/v1/pets');
    routes.add(['GET', 'HEAD'], '/v1/pets/:petId');
    routes.add(['GET', 'HEAD'], '/docs/*');
    routes.add(['GET', 'HEAD'], '/docs/LICENSE');
    filter = new AllExceptionsFilter({ bodyLimitBytes: 16384 } as AppConfig, routes);
  });

  describe("the router's own misses", () => {
    it('answers an unknown path with 404 "No such route"', () => {
      const { answer } = handle(filter, routerMiss('GET', '/v1/nothing'), {
        method: 'GET',
        url: '/v1/nothing',
        is404: true,
      });
      expect(answer).toEqual({
        status: 404,
        headers: {},
        body: { code: 'NOT_FOUND', message: 'No such route', status: 404 },
      });
    });

    it('answers a known path with another method with 405 and Allow', () => {
      const { answer } = handle(filter, routerMiss('DELETE', '/v1/pets/1'), {
        method: 'DELETE',
        url: '/v1/pets/1',
        is404: true,
      });
      expect(answer).toEqual({
        status: 405,
        headers: { Allow: 'GET, HEAD' },
        body: {
          code: 'METHOD_NOT_ALLOWED',
          message: 'Method DELETE is not allowed here; use GET, HEAD',
          status: 405,
        },
      });
    });

    it('answers a missing file under /docs, which its route passed on, with 404 "No such route"', () => {
      const { answer } = handle(filter, routerMiss('GET', '/docs/nothing.js'), {
        method: 'GET',
        url: '/docs/nothing.js',
        is404: true,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ code: 'NOT_FOUND', message: 'No such route', status: 404 });
    });

    it('answers Swagger UI\'s hidden /docs/LICENSE with 404 "No such route"', () => {
      const { answer } = handle(filter, new NotFoundException(), {
        method: 'GET',
        url: '/docs/LICENSE',
        is404: false,
        route: '/docs/LICENSE',
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ code: 'NOT_FOUND', message: 'No such route', status: 404 });
    });

    it('keeps the answer of another error raised while a route miss is answered', () => {
      const { answer } = handle(filter, new PayloadTooLargeException(), {
        method: 'POST',
        url: '/v1/nothing',
        is404: true,
      });
      expect(answer.status).toBe(413);
      expect(answer.body).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Request body exceeds 16384 bytes',
        status: 413,
      });
    });
  });

  describe('a NotFoundException outside the router', () => {
    it('is a route miss too: our handlers answer a missing pet with ApiError', () => {
      const { answer } = handle(filter, new NotFoundException('No owner for pet 7'), {
        method: 'POST',
        url: '/v1/pets/7',
        is404: false,
        route: '/v1/pets/:petId',
      });
      expect(answer).toEqual({
        status: 405,
        headers: { Allow: 'GET, HEAD' },
        body: {
          code: 'METHOD_NOT_ALLOWED',
          message: 'Method POST is not allowed here; use GET, HEAD',
          status: 405,
        },
      });
    });
  });

  describe('logging', () => {
    it('logs a 5xx with its cause and answers without it', () => {
      const cause = new Error('boom at /srv/app/src/pets.service.ts:12');
      const { answer, log } = handle(filter, cause, {
        method: 'GET',
        url: '/v1/pets',
        is404: false,
        route: '/v1/pets',
      });
      expect(answer.body).toEqual({
        code: 'INTERNAL_ERROR',
        message: 'Internal server error',
        status: 500,
      });
      expect(log.error).toHaveBeenCalledWith({ err: cause, status: 500 }, 'request failed');
    });

    it('does not log a client error', () => {
      const { log } = handle(filter, new HttpException('Forbidden resource', 403), {
        method: 'GET',
        url: '/v1/pets',
        is404: false,
        route: '/v1/pets',
      });
      expect(log.error).not.toHaveBeenCalled();
    });
  });
});
