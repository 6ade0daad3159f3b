import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/app-config.js';
import { WebhookDispatcher } from '../../../src/webhooks/webhook-dispatcher.js';
import { WebhookTargetPolicy } from '../../../src/webhooks/webhook-target-policy.js';
import {
  NO_PUBLIC_ADDRESS,
  WebhookTargetRefusedError,
} from '../../../src/webhooks/webhook-target-refused.error.js';

/** A receiver on loopback that counts the TCP connections it accepts. */
interface Receiver {
  port: number;
  connections: number;
  requests: string[];
}

/** What each test opened, closed after it. */
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function receiver(
  respond: RequestListener = (_request, response) => response.end('ok'),
): Promise<Receiver> {
  const state: Receiver = { port: 0, connections: 0, requests: [] };
  const server = createServer((incoming, response) => {
    state.requests.push(`${incoming.method} ${incoming.url}`);
    respond(incoming, response);
  });
  server.on('connection', () => state.connections++);
  cleanups.push(
    () => server.close(),
    () => server.closeAllConnections(),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.port = (server.address() as AddressInfo).port;
  return state;
}

function dispatcher(allowPrivateTargets: boolean): WebhookDispatcher {
  const config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: String(allowPrivateTargets) });
  const created = new WebhookDispatcher(new WebhookTargetPolicy(config));
  cleanups.push(() => created.onApplicationShutdown());
  return created;
}

/** The error a POST through the dispatcher fails with (fails the test if it succeeds). */
async function refusal(url: string, through: WebhookDispatcher): Promise<unknown> {
  return request(url, { method: 'POST', body: '{}', dispatcher: through.agent }).then(
    () => expect.fail(`POST ${url} was not refused`),
    (error: unknown) => error,
  );
}

describe('WebhookDispatcher', () => {
  describe('when private targets are not allowed', () => {
    it('refuses a loopback address before connecting', async () => {
      const target = await receiver();
      const error = await refusal(`https://127.0.0.1:${target.port}/hook`, dispatcher(false));

      expect(error).toBeInstanceOf(WebhookTargetRefusedError);
      expect(error).toMatchObject({
        errorClass: 'target_refused',
        message: 'webhook target 127.0.0.1 is not a public address',
      });
      expect(target.connections).toBe(0);
    });

    it('refuses an IPv6 loopback literal', async () => {
      const error = await refusal('https://[::1]:9/hook', dispatcher(false));

      expect(error).toMatchObject({
        errorClass: 'target_refused',
        message: 'webhook target ::1 is not a public address',
      });
    });

    it('refuses plain http before connecting', async () => {
      const target = await receiver();
      const error = await refusal(`http://127.0.0.1:${target.port}/hook`, dispatcher(false));

      expect(error).toMatchObject({
        errorClass: 'target_refused',
        message: 'webhook target 127.0.0.1 must be reached over https',
      });
      expect(target.connections).toBe(0);
    });

    it('refuses a host name when it resolves to loopback, at connect time', async () => {
      const target = await receiver();
      const error = await refusal(`https://localhost:${target.port}/hook`, dispatcher(false));

      expect(error).toBeInstanceOf(WebhookTargetRefusedError);
      expect(error).toMatchObject({
        errorClass: NO_PUBLIC_ADDRESS,
        message: 'webhook target localhost resolves to a non-public address',
      });
      expect(target.connections).toBe(0);
    });

    it('fails a host name that does not resolve with the same error class', async () => {
      const error = await refusal('https://nothing.invalid/hook', dispatcher(false));

      expect(error).toBeInstanceOf(WebhookTargetRefusedError);
      expect(error).toMatchObject({
        errorClass: NO_PUBLIC_ADDRESS,
        message: 'webhook target nothing.invalid does not resolve',
      });
    });
  });

  describe('when private targets are allowed', () => {
    it('delivers to a loopback receiver', async () => {
      const target = await receiver();
      const response = await request(`http://127.0.0.1:${target.port}/hook`, {
        method: 'POST',
        body: '{}',
        dispatcher: dispatcher(true).agent,
      });

      expect(response.statusCode).toBe(200);
      expect(await response.body.text()).toBe('ok');
      expect(target.requests).toEqual(['POST /hook']);
    });

    it('resolves a host name and connects to an address it resolved to', async () => {
      const target = await receiver();
      const response = await request(`http://localhost:${target.port}/hook`, {
        method: 'POST',
        body: '{}',
        dispatcher: dispatcher(true).agent,
      });

      expect(response.statusCode).toBe(200);
      await response.body.dump();
      expect(target.requests).toEqual(['POST /hook']);
    });

    it('returns a redirect as it is, without following it', async () => {
      const target = await receiver((_request, response) =>
        response.writeHead(302, { location: '/elsewhere' }).end(),
      );
      const response = await request(`http://127.0.0.1:${target.port}/hook`, {
        method: 'POST',
        body: '{}',
        dispatcher: dispatcher(true).agent,
      });

      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toBe('/elsewhere');
      await response.body.dump();
      expect(target.requests).toEqual(['POST /hook']);
    });

    it('sends the URL host name as the TLS server name', async () => {
      const serverNames: string[] = [];
      const tlsServer = createTlsServer({
        SNICallback: (serverName, done) => {
          serverNames.push(serverName);
          done(new Error('no certificate here'));
        },
      });
      cleanups.push(() => tlsServer.close());
      tlsServer.listen(0, '127.0.0.1');
      await once(tlsServer, 'listening');
      const { port } = tlsServer.address() as AddressInfo;

      const error = await refusal(`https://localhost:${port}/hook`, dispatcher(true));

      expect(error).not.toBeInstanceOf(WebhookTargetRefusedError);
      expect(serverNames).toEqual(['localhost']);
    });
  });
});
