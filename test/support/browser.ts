/**
 * Debian's Chromium (`/usr/bin/chromium`, which `.ci/run` installs with apt when missing), driven by
 * playwright-core for the browser tests: never a downloaded browser, never a call to Google's services.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** Without the background-networking flags Chromium calls Google's services, which a closed network refuses. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Browser {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile of its own. */
export async function launchChromium(options: { name: string; viewport: { width: number; height: number }; timeoutMs: number }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this test drives Debian's Chromium and never downloads a browser. ` +
        'Install it with `apt-get install chromium` (`.ci/run` installs it when missing).',
    );
  }
  const profileDir = mkdtempSync(join(tmpdir(), `${options.name}-chromium-`));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: options.viewport,
    timeout: options.timeoutMs,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}
