import { Logger } from '@nestjs/common';

/**
 * Runs one pass of a periodic clean-up (an `@Interval` job every instance runs). A failure is
 * logged under `context` as a warning, not thrown: the next period tries again, and nothing waits
 * on the pass.
 */
export async function sweep(
  context: string,
  rows: string,
  deleteRows: () => Promise<unknown>,
): Promise<void> {
  try {
    await deleteRows();
  } catch (error) {
    new Logger(context).warn(`${rows} not deleted: ${(error as Error).message}`);
  }
}
