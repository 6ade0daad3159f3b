import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { ApiKeyVerifier } from './api-key-verifier.js';
import type { ApiKeyPrincipal } from './principal.js';

export const API_KEY_STRATEGY = 'api-key';

/** What the guard shows Passport of a request: the Authorization header and its token's hash. */
export interface PassportView {
  headers: { authorization?: string };
  apiKeyHash?: string;
}

/**
 * passport-http-bearer, checking the token with the verifier. It also reads `access_token` from
 * the query string and the body, so the guard shows it the Authorization header alone.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(BearerStrategy, API_KEY_STRATEGY) {
  constructor(private readonly verifier: ApiKeyVerifier) {
    super({ passReqToCallback: true });
  }

  async validate(view: PassportView, key: string): Promise<ApiKeyPrincipal | false> {
    return (await this.verifier.verify(key, view.apiKeyHash)) ?? false;
  }
}
