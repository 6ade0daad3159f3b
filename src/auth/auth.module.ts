import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyStrategy } from './bearer.strategy.js';
import { LocalApiKeyProvisioner } from './local-api-key.provisioner.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiKeyEntity])],
  providers: [
    ApiKeysService,
    ApiKeyStrategy,
    LocalApiKeyProvisioner,
    AuthFailureLimiter,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [ApiKeysService],
})
export class AuthModule {}
