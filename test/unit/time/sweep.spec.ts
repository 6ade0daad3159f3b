import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sweep } from '../../../src/time/sweep.js';

describe('sweep', () => {
  afterEach(() => vi.restoreAllMocks());

  it('runs the deletion and logs nothing when it succeeds', async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const deleteRows = vi.fn().mockResolvedValue(3);
    await sweep('Pets', 'expired Idempotency-Keys', deleteRows);
    expect(deleteRows).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('settles and logs a warning naming the rows when the deletion fails', async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await expect(
      sweep('Events', 'expired events', () => Promise.reject(new Error('database is locked'))),
    ).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith('expired events not deleted: database is locked');
  });
});
