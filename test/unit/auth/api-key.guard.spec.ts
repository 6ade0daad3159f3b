import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiKeyGuard } from '../../../src/auth/api-key.guard.js';
import { generateApiKey, hashApiKey } from '../../../src/auth/api-key.js';
import { AuthFailureLimiter } from '../../../src/auth/auth-failure-limiter.js';
import type { ApiKeyVerifier } from '../../../src/auth/api-key-verifier.js';
import { ApiKeyStrategy } from '../../../src/auth/bearer.strategy.js';
import { principalOf, type ApiKeyPrincipal } from '../../../src/auth/principal.js';
import { Public } from '../../../src/auth/public.decorator.js';
import { RecentlyVerifiedKeys } from '../../../src/auth/recently-verified-keys.js';
import { RequireScope } from '../../../src/auth/require-scope.decorator.js';
import { loadConfig } from '../../../src/config/app-config.js';
import { ApiError, WWW_AUTHENTICATE } from '../../../src/errors/api-error.js';
import { Metrics } from '../../../src/metrics/metrics.js';

class PetsController {
  list(): void {}

  @RequireScope('pets:write')
  create(): void {}

  @Public()
  health(): void {}
}

@RequireScope('webhooks:manage')
class WebhooksController {
  list(): void {}

  @RequireScope('pets:read')
  read(): void {}
}

@Public()
class PublicController {
  anything(): void {}
}

type FakeRequest = {
  headers: Record<string, string | undefined>;
  query?: object;
  body?: object;
  socket: { remoteAddress: string };
};

const requestWith = (headers: FakeRequest['headers'] = {}, rest: Partial<FakeRequest> = {}) => ({
  headers,
  socket: { remoteAddress: '192.0.2.1' },
  ...rest,
});

const contextOf = (
  request: FakeRequest,
  handler: (...args: never[]) => unknown = PetsController.prototype.list,
  controller: new () => unknown = PetsController,
) =>
  ({
    getHandler: () => handler,
    getClass: () => controller,
    getArgByIndex: (index: number) => [request, {}][index],
  }) as unknown as ExecutionContext;

const PRINCIPAL: ApiKeyPrincipal = {
  id: 3,
  name: 'ci',
  prefix: '0123456789ab',
  scopes: ['pets:read'],
  expiresAt: null,
};

/** A guard with the failed-authentication limit set as given (off by default). */
function guardWith(limit = '0') {
  const metrics = new Metrics();
  const recentKeys = new RecentlyVerifiedKeys();
  const guard = new ApiKeyGuard(
    new Reflector(),
    recentKeys,
    new AuthFailureLimiter(loadConfig({ AUTH_FAILURE_LIMIT_PER_MINUTE: limit })),
    metrics,
  );
  const refusals = async () =>
    Object.fromEntries(
      (await metrics.authFailures.get()).values.map(({ labels, value }) => [labels.reason, value]),
    );
  return { guard, recentKeys, refusals };
}

/** Passport, replaced: it accepts the token with `principal`, or refuses it when there is none. */
function fakePassport(guard: ApiKeyGuard, principal: ApiKeyPrincipal | false = PRINCIPAL) {
  const passport = Object.getPrototypeOf(ApiKeyGuard.prototype) as ApiKeyGuard;
  return vi.spyOn(passport, 'canActivate').mockImplementation((context: ExecutionContext) => {
    guard.handleRequest(null, principal, undefined, context);
    return Promise.resolve(true);
  });
}

async function refusalOf(run: Promise<unknown>): Promise<ApiError> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('ApiKeyGuard', () => {
  describe('public routes', () => {
    it.each([
      ['a @Public() handler', PetsController.prototype.health, PetsController],
      ['every handler of a @Public() class', PublicController.prototype.anything, PublicController],
    ])('lets %s through without consulting Passport', async (_label, handler, controller) => {
      const { guard } = guardWith();
      const passport = fakePassport(guard);
      await expect(guard.canActivate(contextOf(requestWith(), handler, controller))).resolves.toBe(
        true,
      );
      expect(passport).not.toHaveBeenCalled();
    });
  });

  describe('requests without a bearer token', () => {
    it('answers 401 with a hint when no Authorization header was sent, counted as missing', async () => {
      const { guard, refusals } = guardWith();
      const passport = fakePassport(guard);
      const error = await refusalOf(guard.canActivate(contextOf(requestWith())));
      expect(error.getStatus()).toBe(401);
      expect(error.body).toEqual({
        code: 'UNAUTHORIZED',
        message: 'Missing API key: send it as "Authorization: Bearer <API_KEY>"',
        status: 401,
      });
      expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="animal-store"' });
      expect(passport).not.toHaveBeenCalled();
      expect(await refusals()).toEqual({ missing: 1 });
    });

    it.each(['Basic dXNlcjpwdw==', '', 'Bearer', 'Bearer  two-spaces'])(
      'answers 401 "Invalid API key" to the header %j, counted as malformed',
      async (authorization) => {
        const { guard, refusals } = guardWith();
        const passport = fakePassport(guard);
        const error = await refusalOf(guard.canActivate(contextOf(requestWith({ authorization }))));
        expect(error.body).toEqual({
          code: 'UNAUTHORIZED',
          message: 'Invalid API key',
          status: 401,
        });
        expect(error.headers).toEqual({ 'WWW-Authenticate': WWW_AUTHENTICATE });
        expect(passport).not.toHaveBeenCalled();
        expect(await refusals()).toEqual({ malformed: 1 });
      },
    );
  });

  describe('requests with a bearer token', () => {
    it('hands the token to Passport and puts the accepted key owner on the request', async () => {
      const { guard, refusals } = guardWith();
      const passport = fakePassport(guard);
      const request = requestWith({ authorization: 'bearer pets_key' });
      const context = contextOf(request);
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(passport).toHaveBeenCalledWith(context);
      expect(principalOf(request as never)).toBe(PRINCIPAL);
      expect(await refusals()).toEqual({});
    });

    it('shows Passport the Authorization header alone, never the query string or the body', () => {
      const { guard } = guardWith();
      const request = requestWith(
        { authorization: 'Bearer pets_key', cookie: 'a=b' },
        { query: { access_token: 'from-query' }, body: { access_token: 'from-body' } },
      );
      expect(guard.getRequest(contextOf(request))).toEqual({
        headers: { authorization: 'Bearer pets_key' },
        apiKeyHash: undefined,
      });
    });

    it('answers 401 "Invalid API key" when Passport refuses the token', async () => {
      const { guard } = guardWith();
      fakePassport(guard, false);
      const error = await refusalOf(
        guard.canActivate(contextOf(requestWith({ authorization: 'Bearer pets_wrong' }))),
      );
      expect(error.body).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401 });
      expect(error.headers).toEqual({ 'WWW-Authenticate': WWW_AUTHENTICATE });
    });

    it('rethrows an error from the strategy as is, even with a principal', () => {
      const { guard } = guardWith();
      const error = new Error('database down');
      const context = contextOf(requestWith());
      expect(() => guard.handleRequest(error, false, undefined, context)).toThrow(error);
      expect(() => guard.handleRequest(error, PRINCIPAL, undefined, context)).toThrow(error);
    });

    it('answers 403 when the key lacks the scope the handler requires', async () => {
      const { guard } = guardWith();
      fakePassport(guard);
      const context = contextOf(
        requestWith({ authorization: 'Bearer pets_key' }),
        PetsController.prototype.create,
      );
      const error = await refusalOf(guard.canActivate(context));
      expect(error.body).toEqual({
        code: 'FORBIDDEN',
        message: 'This API key lacks the scope pets:write',
        status: 403,
      });
    });

    it("holds a handler to its controller's scope, unless the handler declares its own", async () => {
      const { guard } = guardWith();
      fakePassport(guard);
      const request = requestWith({ authorization: 'Bearer pets_key' });
      const list = contextOf(request, WebhooksController.prototype.list, WebhooksController);
      expect((await refusalOf(guard.canActivate(list))).body).toEqual({
        code: 'FORBIDDEN',
        message: 'This API key lacks the scope webhooks:manage',
        status: 403,
      });
      const read = contextOf(request, WebhooksController.prototype.read, WebhooksController);
      await expect(guard.canActivate(read)).resolves.toBe(true);
    });
  });

  describe('the failed-authentication limit', () => {
    it('refuses an address past the limit before Passport, whatever it sends', async () => {
      const { guard } = guardWith('1');
      const passport = fakePassport(guard, false);
      await refusalOf(guard.canActivate(contextOf(requestWith())));
      for (const headers of [{}, { authorization: 'Bearer pets_key' }]) {
        const error = await refusalOf(guard.canActivate(contextOf(requestWith(headers))));
        expect(error.getStatus()).toBe(429);
      }
      expect(passport).not.toHaveBeenCalled();
    });

    it('counts a token Passport refuses as a failure of the address', async () => {
      const { guard } = guardWith('1');
      fakePassport(guard, false);
      const request = () => contextOf(requestWith({ authorization: 'Bearer pets_wrong' }));
      expect((await refusalOf(guard.canActivate(request()))).getStatus()).toBe(401);
      expect((await refusalOf(guard.canActivate(request()))).getStatus()).toBe(429);
    });

    it('lets a key this instance verified lately past a blocked address, to Passport', async () => {
      const { guard, recentKeys } = guardWith('1');
      const { key, hash } = generateApiKey();
      recentKeys.add(hash);
      await refusalOf(guard.canActivate(contextOf(requestWith())));
      const passport = fakePassport(guard);
      const context = contextOf(requestWith({ authorization: `Bearer ${key}` }));
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(passport).toHaveBeenCalledWith(context);
    });
  });

  describe('with the real Passport strategy', () => {
    const strategyVerifying = (principal: ApiKeyPrincipal | undefined) => {
      const verify = vi.fn((_key: string, _hash?: string) => Promise.resolve(principal));
      new ApiKeyStrategy({ verify } as unknown as ApiKeyVerifier);
      return verify;
    };
    const carryingAccessTokens = (authorization: string) =>
      requestWith(
        { authorization },
        { query: { access_token: 'from-query' }, body: { access_token: 'from-body' } },
      );

    it('verifies the header token, whatever access_token the query string and body carry', async () => {
      const verify = strategyVerifying(PRINCIPAL);
      const { guard } = guardWith();
      const request = carryingAccessTokens('Bearer pets_key');
      await expect(guard.canActivate(contextOf(request))).resolves.toBe(true);
      expect(verify).toHaveBeenCalledExactlyOnceWith('pets_key', hashApiKey('pets_key'));
      expect(principalOf(request as never)).toBe(PRINCIPAL);
    });

    it('answers 401 "Invalid API key" when the verifier refuses the token', async () => {
      strategyVerifying(undefined);
      const { guard } = guardWith();
      const error = await refusalOf(
        guard.canActivate(contextOf(carryingAccessTokens('Bearer pets_wrong'))),
      );
      expect(error.body).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid API key', status: 401 });
    });
  });
});
