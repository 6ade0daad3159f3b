import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import { relaxedGuards } from '../../../src/config/relaxed-guards.js';

describe('relaxedGuards', () => {
  it('finds none in the production defaults', () => {
    expect(relaxedGuards(loadConfig({}))).toEqual([]);
  });

  it('finds none in limits above 0 and proxy ranges narrower than every address', () => {
    const config = loadConfig({
      RATE_LIMIT_PER_MINUTE: '1',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1',
      TRUSTED_PROXIES: '10.0.0.0/8,0.0.0.0/1,2001:db8::/32,192.0.2.10',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
    });
    expect(relaxedGuards(config)).toEqual([]);
  });

  it('names each relaxed guard by its variable and value, in the README table order', () => {
    const config = loadConfig({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      TRUSTED_PROXIES: '10.0.0.0/8, 0.0.0.0/0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    expect(relaxedGuards(config)).toEqual([
      {
        variable: 'RATE_LIMIT_PER_MINUTE',
        value: '0',
        effect: 'requests per API key are not limited',
      },
      {
        variable: 'AUTH_FAILURE_LIMIT_PER_MINUTE',
        value: '0',
        effect: 'failed authentications per client address are not limited',
      },
      {
        variable: 'TRUSTED_PROXIES',
        value: '10.0.0.0/8,0.0.0.0/0',
        effect:
          'X-Forwarded-For is believed from any address, so a client picks the address its failed authentications count against',
      },
      {
        variable: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
        value: 'true',
        effect:
          'webhooks may be sent over plain http to loopback, private and link-local addresses, the cloud metadata service included',
      },
    ]);
  });

  it.each(['::/0', '0.0.0.0/0'])('counts TRUSTED_PROXIES=%s as trusting every address', (range) => {
    expect(relaxedGuards(loadConfig({ TRUSTED_PROXIES: range }))).toMatchObject([
      { variable: 'TRUSTED_PROXIES', value: range },
    ]);
  });
});
