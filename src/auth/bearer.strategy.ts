import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { IncomingMessage } from 'node:http';
import { Strategy as BearerStrategy, type VerifyFunction } from 'passport-http-bearer';
import { ApiKeyVerifier } from './api-key-verifier.js';
import type { ApiKeyPrincipal } from './principal.js';

export const API_KEY_STRATEGY = 'api-key';

/**
 * passport-http-bearer also accepts `access_token` from the body and the query string; keys must
 * travel in the Authorization header only (docs/api-design.md, "API keys"), so it is shown
 * nothing else.
 */
class AuthorizationHeaderBearerStrategy extends BearerStrategy<VerifyFunction> {
  override authenticate(request: IncomingMessage, options?: object): void {
    const headerOnly = { headers: { authorization: request.headers.authorization } };
    super.authenticate(headerOnly as never, options);
  }
}

@Injectable()
export class ApiKeyStrategy extends PassportStrategy(
  AuthorizationHeaderBearerStrategy,
  API_KEY_STRATEGY,
) {
  constructor(private readonly verifier: ApiKeyVerifier) {
    super();
  }

  async validate(key: string): Promise<ApiKeyPrincipal | false> {
    return (await this.verifier.verify(key)) ?? false;
  }
}
