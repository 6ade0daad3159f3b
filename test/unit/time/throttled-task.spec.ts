import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ThrottledTask } from '../../../src/time/throttled-task.js';

/** A task whose runs end when the test says so. */
function controlledTask() {
  const ends: (() => void)[] = [];
  const task = vi.fn(() => new Promise<void>((resolve) => ends.push(resolve)));
  const endRun = async () => {
    ends.shift()!();
    await vi.advanceTimersByTimeAsync(0);
  };
  return { task, endRun };
}

describe('ThrottledTask', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs at once when nothing runs', () => {
    const { task } = controlledTask();
    new ThrottledTask(50, task).request();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('folds the requests made during a run into one more run, after the interval', async () => {
    const { task, endRun } = controlledTask();
    const throttled = new ThrottledTask(50, task);
    throttled.request();
    throttled.request();
    throttled.request();
    await vi.advanceTimersByTimeAsync(10);
    await endRun();
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(39);
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(task).toHaveBeenCalledTimes(2);
    await endRun();
    await vi.advanceTimersByTimeAsync(100);
    expect(task).toHaveBeenCalledTimes(2);
  });

  it('runs again at once when the run took longer than the interval', async () => {
    const { task, endRun } = controlledTask();
    const throttled = new ThrottledTask(50, task);
    throttled.request();
    await vi.advanceTimersByTimeAsync(80);
    throttled.request();
    await endRun();
    expect(task).toHaveBeenCalledTimes(2);
  });

  it('waits the rest of the interval after a run before the next request is served', async () => {
    const { task, endRun } = controlledTask();
    const throttled = new ThrottledTask(50, task);
    throttled.request();
    await endRun();
    throttled.request();
    expect(task).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(task).toHaveBeenCalledTimes(2);
  });

  it('settles when the run under way has', async () => {
    const { task, endRun } = controlledTask();
    const throttled = new ThrottledTask(50, task);
    await throttled.settled();
    throttled.request();
    let settled = false;
    void throttled.settled().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await endRun();
    expect(settled).toBe(true);
  });
});
