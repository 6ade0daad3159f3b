import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors/api-error.js';
import type { EventPosition } from '../../../src/events/event-position.js';
import { EventsService } from '../../../src/events/events.service.js';

/** A feed whose newest event is 0-9 and whose retention deleted through 0-3, as on SQLite. */
function serviceOver() {
  const reads: string[] = [];
  const repository = {
    issues: ({ tx }: EventPosition) => tx === 0n,
    findNewestPosition: () => {
      reads.push('newest');
      return Promise.resolve({ tx: 0n, seq: 9n });
    },
    findPurgedThrough: () => {
      reads.push('purged');
      return Promise.resolve({ tx: 0n, seq: 3n });
    },
  };
  return { service: new EventsService(repository as never), reads };
}

describe('EventsService.resumePosition', () => {
  it('resumes after Last-Event-ID, which wins over after', async () => {
    const { service } = serviceOver();
    expect(await service.resumePosition('0-5', '0-7')).toEqual({ tx: 0n, seq: 5n });
  });

  it('resumes after after without Last-Event-ID', async () => {
    const { service } = serviceOver();
    expect(await service.resumePosition(undefined, '0-7')).toEqual({ tx: 0n, seq: 7n });
  });

  it('starts after the newest event without either, and checks no retention', async () => {
    const { service, reads } = serviceOver();
    expect(await service.resumePosition(undefined, undefined)).toEqual({ tx: 0n, seq: 9n });
    expect(reads).toEqual(['newest']);
  });

  it.each([
    ['abc', undefined, 'Last-Event-ID must be the id of an event from this feed'],
    ['1-5', undefined, 'Last-Event-ID must be the id of an event from this feed'],
    [undefined, '7', 'after must be the id of an event from this feed'],
  ])('refuses Last-Event-ID %s, after %s: 400', async (lastEventId, after, message) => {
    const { service } = serviceOver();
    const refused = service.resumePosition(lastEventId, after);
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({
      body: { code: 'VALIDATION_FAILED', message, status: 400 },
    });
  });

  it('refuses a position before what retention deleted: 410', async () => {
    const { service } = serviceOver();
    await expect(service.resumePosition('0-2', undefined)).rejects.toMatchObject({
      body: { code: 'CURSOR_EXPIRED', status: 410 },
    });
    expect(await service.resumePosition('0-3', undefined)).toEqual({ tx: 0n, seq: 3n });
  });
});
