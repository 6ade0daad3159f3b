import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/** An event id as docs/events.md defines it: at most 64 characters of `A-Za-z0-9_-`. */
const EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The event id saved in `file`; undefined when the file does not exist yet (a first start). Any
 * other content is an error, never a fresh start: starting over would replay the whole feed.
 */
export async function readCursor(file: string): Promise<string | undefined> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const id = content.trim();
  if (!EVENT_ID.test(id))
    throw new Error(`${file} does not hold an event id: ${JSON.stringify(id)}`);
  return id;
}

/**
 * Replaces the id saved in `file`, durably and all at once: the new content goes to a file beside
 * it, reaches the disk, and is renamed over the old one, so a crash at any moment leaves either the
 * old id or the new one, never a torn line.
 */
export async function saveCursor(file: string, id: string): Promise<void> {
  const written = `${file}.tmp`;
  await syncWrite(written, `${id}\n`);
  await rename(written, file);
  // The rename is on disk once the directory that lists the file is.
  await syncDirectory(dirname(file));
}

async function syncWrite(file: string, content: string): Promise<void> {
  const handle = await open(file, 'w');
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
