import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BatchedStdout } from '../../../src/logging/batched-stdout.js';

/** The writes the destination makes, one string each. */
function recordingOutput(): { writes: string[]; write(text: string): void } {
  const writes: string[] = [];
  return { writes, write: (text) => writes.push(text) };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('BatchedStdout', () => {
  it("writes a turn's lines in one write, in order, once the turn ends", async () => {
    const out = recordingOutput();
    const destination = new BatchedStdout(out);

    destination.write('a\n');
    destination.write('b\n');
    destination.write('c\n');
    expect(out.writes).toEqual([]);

    await nextTurn();
    expect(out.writes).toEqual(['a\nb\nc\n']);
  });

  it('gives each turn its own write, and a turn without lines none', async () => {
    const out = recordingOutput();
    const destination = new BatchedStdout(out);

    destination.write('first\n');
    await nextTurn();
    await nextTurn();
    destination.write('second\n');
    await nextTurn();

    expect(out.writes).toEqual(['first\n', 'second\n']);
  });

  it('writes the lines held at once on flushSync, and never twice', async () => {
    const out = recordingOutput();
    const destination = new BatchedStdout(out);

    destination.write('held\n');
    destination.flushSync();
    expect(out.writes).toEqual(['held\n']);

    await nextTurn();
    expect(out.writes).toEqual(['held\n']);
  });

  it("answers pino's flush(callback) after writing what it holds", () => {
    const out = recordingOutput();
    const destination = new BatchedStdout(out);
    const written: string[][] = [];

    destination.write('held\n');
    destination.flush(() => written.push([...out.writes]));

    expect(written).toEqual([['held\n']]);
  });

  it("carries a pino logger's lines, a fatal one written before the call returns", async () => {
    const out = recordingOutput();
    const logger = pino({ base: undefined, timestamp: false }, new BatchedStdout(out));

    logger.info('one');
    logger.warn({ n: 2 }, 'two');
    await nextTurn();
    logger.fatal('three');

    expect(out.writes).toEqual([
      '{"level":30,"msg":"one"}\n{"level":40,"n":2,"msg":"two"}\n',
      '{"level":60,"msg":"three"}\n',
    ]);
  });
});
