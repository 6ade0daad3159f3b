import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyGuard } from '../../../src/auth/api-key.guard.js';
import { Public } from '../../../src/auth/public.decorator.js';
import { ApiError, WWW_AUTHENTICATE } from '../../../src/errors/api-error.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { AuthFailureLimiter } from '../../../src/auth/auth-failure-limiter.js';
import { RecentlyVerifiedKeys } from '../../../src/auth/recently-verified-keys.js';

const httpContext = (headers: Record<string, string | undefined>) =>
  ({ switchToHttp: () => ({ getRequest: () => ({ headers }) }) }) as unknown as ExecutionContext;

class HealthController {
  @Public()
  check(): void {}

  list(): void {}
}

@Public()
class PublicController {
  anything(): void {}
}

const handlerContext = (
  handler: (...args: never[]) => unknown,
  controller: new () => unknown,
  headers = {},
) =>
  ({
    getHandler: () => handler,
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => ({ headers }), getResponse: () => ({}) }),
  }) as unknown as ExecutionContext;

describe('ApiKeyGuard', () => {
  // The failed-authentication limit is off here: the e2e tests prove it through the real app.
  const guard = new ApiKeyGuard(
    new Reflector(),
    new RecentlyVerifiedKeys(),
    new AuthFailureLimiter(loadConfig({ AUTH_FAILURE_LIMIT_PER_MINUTE: '0' })),
  );

  describe('handleRequest', () => {
    it('rethrows an error from the strategy as is', () => {
      const error = new Error('database down');
      expect(() => guard.handleRequest(error, false, undefined, httpContext({}))).toThrow(error);
    });

    it('rethrows the error even when a principal came with it', () => {
      const error = new Error('boom');
      expect(() => guard.handleRequest(error, { id: 1 }, undefined, httpContext({}))).toThrow(
        error,
      );
    });

    it('answers 401 with a hint when no Authorization header was sent', () => {
      const error = catchError(() => guard.handleRequest(null, false, undefined, httpContext({})));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).getStatus()).toBe(401);
      expect((error as ApiError).body).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
        status: 401,
      });
      expect((error as ApiError).headers).toEqual({
        'WWW-Authenticate': 'Bearer realm="animal-store"',
      });
    });

    it.each(['Bearer pets_wrong', 'Basic dXNlcjpwdw==', ''])(
      'answers 401 "Invalid API key" when the header %j was sent',
      (authorization) => {
        const error = catchError(() =>
          guard.handleRequest(null, false, undefined, httpContext({ authorization })),
        );
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).body).toEqual({
          code: 'UNAUTHORIZED',
          message: 'Invalid API key',
          status: 401,
        });
        expect((error as ApiError).headers).toEqual({ 'WWW-Authenticate': WWW_AUTHENTICATE });
      },
    );

    it('returns the principal when the key was accepted', () => {
      const principal = { id: 3, name: 'ci' };
      expect(
        guard.handleRequest(null, principal, undefined, httpContext({ authorization: 'Bearer x' })),
      ).toBe(principal);
    });
  });

  describe('canActivate', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    const spyOnPassport = () =>
      vi
        .spyOn(Object.getPrototypeOf(ApiKeyGuard.prototype), 'canActivate')
        .mockResolvedValue('passport');

    it('lets a @Public() handler through without consulting passport', async () => {
      const passport = spyOnPassport();
      await expect(
        guard.canActivate(handlerContext(HealthController.prototype.check, HealthController)),
      ).resolves.toBe(true);
      expect(passport).not.toHaveBeenCalled();
    });

    it('lets every handler of a @Public() class through without consulting passport', async () => {
      const passport = spyOnPassport();
      await expect(
        guard.canActivate(handlerContext(PublicController.prototype.anything, PublicController)),
      ).resolves.toBe(true);
      expect(passport).not.toHaveBeenCalled();
    });

    it('delegates an unmarked handler to passport', async () => {
      const passport = spyOnPassport();
      const context = handlerContext(HealthController.prototype.list, HealthController);
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(passport).toHaveBeenCalledWith(context);
    });
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
