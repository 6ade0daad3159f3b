import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { DeliveryVerifier } from '../../examples/webhook-receiver/src/delivery-verifier.js';
import { RecentIds } from '../../examples/webhook-receiver/src/recent-ids.js';
import { webhookReceiver, WEBHOOK_PATH } from '../../examples/webhook-receiver/src/receiver.js';
import { eventJson, petJson } from '../../src/events/event-json.js';
import type { PetEventType } from '../../src/events/pet-event.js';
import { WEBHOOK_RECEIVER_COMMAND } from '../support/example-commands.js';
import {
  startWebhookReceiver,
  waitFor,
  type Finished,
  type ServerProcess,
} from '../support/processes.js';

const TSC = resolve('node_modules/.bin/tsc');
/** Past the package's tolerance of 5 minutes either way. */
const SIX_MINUTES_MS = 6 * 60 * 1000;

/** A secret as POST /v1/webhooks gives it: `whsec_` and the base64 of 32 random bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** An event's id and its JSON, as the store sends them. */
interface WireEvent {
  id: string;
  body: string;
}

let seq = 0;

/** A new event's id and its body, as the store writes it (src/events/event-json.ts). */
function nextEvent(type: PetEventType = 'pet.created', previous: string | null = null): WireEvent {
  seq += 1;
  const pet = { id: seq, name: `Pet "${seq}"`, categoryId: 1, status: 'available' };
  const event = { tx: 7n, seq: BigInt(seq), type, occurredAt: new Date(), previous };
  return { id: `7-${seq}`, body: eventJson({ ...event, pet: petJson(pet), traceContext: null }) };
}

/** The line the receiver's handler logs for a pet.created from nextEvent(). */
function handledLine({ id }: WireEvent): string {
  const n = Number(id.split('-')[1]);
  return `handled ${id} pet.created pet={"id":${n},"name":"Pet \\"${n}\\"","categoryId":1,"status":"available"}`;
}

type SignatureHeader = 'webhook-id' | 'webhook-timestamp' | 'webhook-signature';

interface DeliveryOptions {
  /** Each signs the delivery; their signatures are sent space-separated. */
  secrets: string[];
  timestamp?: Date;
  body?: string;
  without?: SignatureHeader;
  method?: string;
  url?: string;
}

/** Sends a delivery as the store does (Standard Webhooks headers, signed with the package). */
async function deliver(
  url: string,
  { id, body }: WireEvent,
  options: DeliveryOptions,
): Promise<{ status: number; body: string }> {
  const timestamp = options.timestamp ?? new Date();
  const signatures = options.secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body));
  const headers: Record<string, string> = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
    'content-type': 'application/json',
  };
  if (options.without) delete headers[options.without];
  const response = await fetch(options.url ?? url, {
    method: options.method ?? 'POST',
    headers,
    body: options.body ?? body,
  });
  return { status: response.status, body: await response.text() };
}

const lines = (output: string, prefix: string) =>
  output.split('\n').filter((line) => line.startsWith(prefix));

describe('webhook receiver example', () => {
  const secret = newSecret();
  const previousSecret = newSecret();
  let receiver: ServerProcess;

  beforeAll(async () => {
    receiver = await startWebhookReceiver({
      WEBHOOK_SECRET: secret,
      WEBHOOK_PREVIOUS_SECRET: previousSecret,
    });
  });
  afterAll(async () => {
    receiver?.child.kill('SIGTERM');
    await receiver?.exited;
  });

  const send = (event: WireEvent, options: Partial<DeliveryOptions> = {}) =>
    deliver(receiver.baseUrl, event, { secrets: [secret], ...options });
  const handledLines = () => lines(receiver.stdout(), 'handled ');

  /**
   * What the handler logged from the `from`th handled line on, once a delivery sent after the
   * requests before was handled: the receiver logs in the order it answers, so nothing they
   * caused can appear later.
   */
  async function handledSince(from: number): Promise<string[]> {
    const marker = nextEvent();
    expect(await send(marker)).toEqual({ status: 204, body: '' });
    await waitFor(() => handledLines().includes(handledLine(marker)));
    return handledLines().slice(from, -1);
  }

  /** Sends the delivery; it must be answered 400 with its reason logged, and not handled. */
  async function expectRefused(
    event: WireEvent,
    options: Partial<DeliveryOptions>,
    reason: string,
  ) {
    const from = handledLines().length;

    const answer = await send(event, options);

    expect(answer).toEqual({ status: 400, body: '' });
    await waitFor(() => receiver.output().includes(`rejected "${event.id}": ${reason}\n`));
    expect(await handledSince(from)).toEqual([]);
  }

  it('answers a signed delivery 204 once it handled the event', async () => {
    const from = handledLines().length;
    const event = nextEvent();

    expect(await send(event)).toEqual({ status: 204, body: '' });

    expect(await handledSince(from)).toEqual([handledLine(event)]);
  });

  it('hands a pet.updated to the handler with the changed members before the change', async () => {
    const from = handledLines().length;
    const event = nextEvent('pet.updated', '{"status":null}');

    expect(await send(event)).toEqual({ status: 204, body: '' });

    const n = event.id.split('-')[1];
    expect(await handledSince(from)).toEqual([
      `handled ${event.id} pet.updated pet={"id":${n},"name":"Pet \\"${n}\\"","categoryId":1,"status":"available"} previous={"status":null}`,
    ]);
  });

  it('answers a repeated webhook-id 204 without handling the event again', async () => {
    const from = handledLines().length;
    const event = nextEvent();

    const first = await send(event);
    // A retry carries the same id with a new timestamp and signature.
    const retry = await send(event, { timestamp: new Date(Date.now() + 2_000) });

    expect([first, retry]).toEqual([
      { status: 204, body: '' },
      { status: 204, body: '' },
    ]);
    expect(await handledSince(from)).toEqual([handledLine(event)]);
    expect(lines(receiver.stdout(), 'duplicate ')).toContain(`duplicate ${event.id} ignored`);
  });

  it('accepts a delivery signed only with the previous secret, during a rotation', async () => {
    const from = handledLines().length;
    const event = nextEvent();

    expect(await send(event, { secrets: [previousSecret] })).toEqual({ status: 204, body: '' });

    expect(await handledSince(from)).toEqual([handledLine(event)]);
  });

  it('accepts a delivery carrying two signatures, whichever comes first', async () => {
    const from = handledLines().length;
    const events = [nextEvent(), nextEvent(), nextEvent()];

    const answers = [
      await send(events[0], { secrets: [secret, previousSecret] }),
      await send(events[1], { secrets: [previousSecret, secret] }),
      await send(events[2], { secrets: [newSecret(), secret] }),
    ];

    expect(answers).toEqual(Array(3).fill({ status: 204, body: '' }));
    expect(await handledSince(from)).toEqual(events.map(handledLine));
  });

  it('refuses 400 a delivery signed with another secret', async () => {
    await expectRefused(nextEvent(), { secrets: [newSecret()] }, 'No matching signature found');
  });

  it('refuses 400 a body that differs from the signed bytes, even as equal JSON', async () => {
    const event = nextEvent();
    const reformatted = JSON.stringify(JSON.parse(event.body), null, 2);

    await expectRefused(event, { body: reformatted }, 'No matching signature found');
  });

  it.each([
    ['too old', -SIX_MINUTES_MS],
    ['too new', SIX_MINUTES_MS],
  ])('refuses 400 a delivery whose timestamp is %s', async (reason, offsetMs) => {
    const timestamp = new Date(Date.now() + offsetMs);

    await expectRefused(nextEvent(), { timestamp }, `Message timestamp ${reason}`);
  });

  it.each(['webhook-timestamp', 'webhook-signature'] as const)(
    'refuses 400 a delivery without %s',
    async (without) => {
      await expectRefused(nextEvent(), { without }, 'Missing required headers');
    },
  );

  it('refuses 400 a delivery without webhook-id', async () => {
    const from = handledLines().length;

    const answer = await send(nextEvent(), { without: 'webhook-id' });

    expect(answer).toEqual({ status: 400, body: '' });
    await waitFor(() => receiver.output().includes('rejected null: Missing required headers\n'));
    expect(await handledSince(from)).toEqual([]);
  });

  it('refuses 413 a body over 64 KiB without handling it', async () => {
    const from = handledLines().length;

    const answer = await send(nextEvent(), { body: 'x'.repeat(64 * 1024 + 1) });

    expect(answer).toEqual({ status: 413, body: '' });
    expect(await handledSince(from)).toEqual([]);
  });

  it('answers other paths 404 and other methods 405 with Allow', async () => {
    const url = new URL(receiver.baseUrl);
    url.pathname = '/webhooks/other';
    const elsewhere = await send(nextEvent(), { url: url.href });
    const get = await fetch(receiver.baseUrl);

    expect(elsewhere).toEqual({ status: 404, body: '' });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  });
});

describe('webhook receiver example as a process', () => {
  it('stops on SIGTERM with exit status 0', async () => {
    const secret = newSecret();
    const receiver = await startWebhookReceiver({ WEBHOOK_SECRET: secret });
    const event = nextEvent();
    expect(await deliver(receiver.baseUrl, event, { secrets: [secret] })).toEqual({
      status: 204,
      body: '',
    });

    receiver.child.kill('SIGTERM');

    expect(await receiver.exited).toBe(0);
    expect(receiver.stdout()).toBe(
      `webhook receiver listening on ${receiver.baseUrl}\n${handledLine(event)}\n` +
        'webhook receiver stopped\n',
    );
  });

  it.each([
    [
      'without WEBHOOK_SECRET',
      {},
      "Set WEBHOOK_SECRET to the subscription's secret (whsec_…), which POST /v1/webhooks answers once.\n",
    ],
    [
      'with a WEBHOOK_PREVIOUS_SECRET that is not base64',
      { WEBHOOK_SECRET: newSecret(), WEBHOOK_PREVIOUS_SECRET: 'whsec_not base64' },
      'WEBHOOK_SECRET and WEBHOOK_PREVIOUS_SECRET take secrets as the store gives them (whsec_…): ' +
        'Base64Coder: incorrect characters for decoding\n',
    ],
  ])('exits 2 %s, saying what to set', async (_case, env, stderr) => {
    const {
      WEBHOOK_SECRET: _secret,
      WEBHOOK_PREVIOUS_SECRET: _previous,
      ...inherited
    } = process.env;

    const finished = await new Promise<Finished>((done) =>
      execFile(
        'node',
        WEBHOOK_RECEIVER_COMMAND,
        { env: { ...inherited, PORT: '0', ...env } },
        (error, out, err) =>
          done({ code: error ? (error.code as number) : 0, stdout: out, stderr: err }),
      ),
    );

    expect(finished).toEqual({ code: 2, stdout: '', stderr });
  });

  it('type-checks: tsc -p examples/webhook-receiver/tsconfig.json exits 0', async () => {
    const checked = await new Promise<Finished>((done) =>
      execFile(
        TSC,
        ['-p', 'examples/webhook-receiver/tsconfig.json', '--pretty', 'false'],
        (error, stdout, stderr) =>
          done({ code: error ? (error.code as number) : 0, stdout, stderr }),
      ),
    );

    expect(checked).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('webhook receiver example in process', () => {
  const secret = newSecret();
  let server: Server;
  let url: string;
  let failNext = true;
  const handled: string[] = [];
  let errors: MockInstance<typeof console.error>;

  beforeAll(async () => {
    // What the receiver logs is asserted on where it runs as a process; here it stays quiet.
    vi.spyOn(console, 'log').mockImplementation(() => {});
    errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    server = createServer(
      webhookReceiver({
        verifier: new DeliveryVerifier([secret]),
        handled: new RecentIds(2),
        handle: ({ id }) => {
          if (failNext) {
            failNext = false;
            throw new Error('the listing service is down');
          }
          handled.push(id);
        },
      }),
    );
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${WEBHOOK_PATH}`;
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await new Promise((closed) => server?.close(closed));
  });

  it('answers 500 when the handler throws, and handles the retry', async () => {
    const event = nextEvent();

    const failed = await deliver(url, event, { secrets: [secret] });
    const retried = await deliver(url, event, { secrets: [secret] });

    expect([failed.status, retried.status]).toEqual([500, 204]);
    expect(handled).toEqual([event.id]);
    expect(errors.mock.calls).toEqual([
      ['handling a delivery failed:', new Error('the listing service is down')],
    ]);
  });

  it('remembers the last ids it handled, as many as it was given room for', async () => {
    handled.length = 0;
    const [a, b, c] = [nextEvent(), nextEvent(), nextEvent()];

    for (const event of [a, b, c, c, b, a]) await deliver(url, event, { secrets: [secret] });

    // Room for two: a was forgotten when c came, so its repeat is handled again.
    expect(handled).toEqual([a.id, b.id, c.id, a.id]);
  });
});
