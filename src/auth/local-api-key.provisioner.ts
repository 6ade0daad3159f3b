import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ApiKeyStore } from './api-key-store.js';

/**
 * Makes the quick start usable: outside production, an empty key store (no key at all, revoked
 * ones included) gets one key named `local`, printed once. Production never gets a key it did not
 * ask for. Meant for one local process; replicas run with NODE_ENV=production.
 */
@Injectable()
export class LocalApiKeyProvisioner implements OnApplicationBootstrap {
  private readonly logger = new Logger('ApiKeys');

  constructor(
    private readonly config: AppConfig,
    private readonly apiKeys: ApiKeyStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.apiKeys.isEmpty())) return;
    if (this.config.nodeEnv === 'production') {
      this.logger.warn(
        'No API key exists: every request will get 401 until one is created (npm run apikey -- create <name>)',
      );
      return;
    }
    const { key } = await this.apiKeys.create('local');
    this.logger.warn(
      `No API key existed, so one named "local" was created. It is shown only now: ${key}`,
    );
  }
}
