import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium package. Playwright never downloads a browser here: this one is used or none. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The machine has no internet: these flags keep Chromium from trying to reach Google (component
 * updates, sync, field trials, QUIC probes), which would only slow the tests down. `--no-sandbox`
 * because the tests may run as root in a container.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/**
 * Launches headless Chromium. Playwright gives it a fresh temporary profile (user-data-dir) and
 * deletes it on close; each `browser.newContext()` is then an isolated session (own localStorage).
 */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled()) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}, and CI must run the browser tests: apt-get install chromium`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
