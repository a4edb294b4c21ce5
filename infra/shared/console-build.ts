/**
 * Building the admin console (`console/`, a Vite + React app) into `console/dist`, for whoever needs the build: the
 * local runtime serves it (`infra/local/runtime/console-assets.ts`), the CDK app deploys it (`infra/aws/console-stack.ts`).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONSOLE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../console');
export const CONSOLE_DIST = join(CONSOLE_ROOT, 'dist');
export const INDEX_FILE = join(CONSOLE_DIST, 'index.html');

/** The newest modification time of the console's sources (everything under `console/` but its build output). */
function newestSourceTime(dir = CONSOLE_ROOT): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (path === CONSOLE_DIST || entry.name === 'node_modules') continue;
    newest = Math.max(newest, entry.isDirectory() ? newestSourceTime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when `console/dist` holds a build at least as new as every source file. */
export const consoleBuildIsFresh = () => existsSync(INDEX_FILE) && statSync(INDEX_FILE).mtimeMs >= newestSourceTime();

/**
 * Builds the console with Vite (`vite build`, the config in `console/vite.config.ts`) unless the build is fresh.
 * Vite runs in a child process: its bundler's native code refuses plugin objects made inside Jest's VM modules,
 * and serving the built files never needs Vite loaded.
 *
 * The build goes to a folder of its own under `.data/`, which then takes `console/dist`'s place by two renames: a
 * server (or a synth) reading `console/dist` meanwhile, or another build at the same moment (`npm start`, the
 * browser tests, `cdk synth` all build a stale console), never sees a half-written folder; between the renames
 * `console/dist` is briefly missing, and a request then answers 503 "not built" (retry).
 */
export async function ensureConsoleBuilt(log: (line: string) => void = (line) => process.stdout.write(line)): Promise<void> {
  if (consoleBuildIsFresh()) return;
  const started = Date.now();
  log('Building the admin console ... ');
  const vite = join(CONSOLE_ROOT, '../node_modules/vite/bin/vite.js');
  if (!existsSync(vite)) {
    log('failed\n');
    throw new Error('The admin console (console/) cannot be built: Vite is not installed. Run `npm install`, then start again.');
  }
  mkdirSync(BUILD_DIR, { recursive: true });
  const staging = mkdtempSync(join(BUILD_DIR, 'console-dist-'));
  try {
    await run(process.execPath, [vite, 'build', '--config', join(CONSOLE_ROOT, 'vite.config.ts'), '--logLevel', 'warn', '--outDir', staging, '--emptyOutDir']);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    log('failed\n');
    throw new Error(
      `The admin console (console/) did not build:\n${error instanceof Error ? error.message : String(error)}\n` +
        'Fix the file named above, then check with `npm run console:build`.',
    );
  }
  // mkdtemp makes the folder private to this user; the build it becomes is readable like any checkout.
  chmodSync(staging, 0o755);
  replaceDist(staging);
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** Where builds are made before they replace `console/dist` (ignored by git, on the same file system). */
const BUILD_DIR = join(dirname(CONSOLE_ROOT), '.data', 'console-builds');

/** Puts the finished build `staging` in `console/dist`'s place; if another build got there in between, keeps that one. */
function replaceDist(staging: string): void {
  const retired = `${staging}-retired`;
  try {
    renameSync(CONSOLE_DIST, retired);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    renameSync(staging, CONSOLE_DIST);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  rmSync(retired, { recursive: true, force: true });
}

/** Runs a command to its end; a failure's message is what it wrote. */
const run = (command: string, args: string[]) =>
  new Promise<void>((resolvePromise, reject) => {
    execFile(command, args, { cwd: dirname(CONSOLE_ROOT), maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) =>
      error === null ? resolvePromise() : reject(new Error(`${stderr}${stdout}`.trim() || error.message)),
    );
  });
