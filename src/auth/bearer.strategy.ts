import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { ApiKeyVerifier } from './api-key-verifier.js';
import type { ApiKeyPrincipal } from './principal.js';

export const API_KEY_STRATEGY = 'api-key';

/**
 * passport-http-bearer, checking the token with the verifier. It also reads `access_token` from
 * the query string and the body, so the guard shows it the Authorization header alone.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(BearerStrategy, API_KEY_STRATEGY) {
  constructor(private readonly verifier: ApiKeyVerifier) {
    super();
  }

  async validate(key: string): Promise<ApiKeyPrincipal | false> {
    return (await this.verifier.verify(key)) ?? false;
  }
}
