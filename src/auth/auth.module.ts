import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyLookup } from './api-key-lookup.js';
import { ApiKeyStore } from './api-key-store.js';
import { ApiKeyUsage } from './api-key-usage.js';
import { ApiKeyVerifier } from './api-key-verifier.js';
import { ApiKeyStrategy } from './bearer.strategy.js';
import { LocalApiKeyProvisioner } from './local-api-key.provisioner.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { RecentlyVerifiedKeys } from './recently-verified-keys.js';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiKeyEntity])],
  providers: [
    ApiKeyStore,
    ApiKeyLookup,
    ApiKeyUsage,
    RecentlyVerifiedKeys,
    ApiKeyVerifier,
    ApiKeyStrategy,
    LocalApiKeyProvisioner,
    AuthFailureLimiter,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [ApiKeyStore, ApiKeyUsage, ApiKeyVerifier],
})
export class AuthModule {}
