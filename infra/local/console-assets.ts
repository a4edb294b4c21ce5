/**
 * The admin console (issue 13, `console/`, a Vite + React app) as the local HTTP API serves it: `GET /admin` and
 * everything under it answer with the built files of `console/dist`, `index.html` standing in for any path without
 * a file extension (the app routes those itself), and `/admin/config.json` with the runtime configuration: token
 * sign-in (in AWS the console stack writes its own, `infra/aws/console-stack.ts`). The console only calls the admin
 * API, from this same origin, so its pages are held to a Content-Security-Policy as strict as the API reference's;
 * the policy and the other headers are `infra/console-site.ts`'s, which CloudFront sends in AWS.
 *
 * `npm start` builds the console first when `console/dist` is missing or older than a file under `console/`
 * (`ensureConsoleBuilt`); the browser test builds it the same way.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_CONFIG_PATH, CONSOLE_CONTENT_SECURITY_POLICY, CONSOLE_SECURITY_HEADERS, consoleRuntimeConfig } from '../console-site';

const CONSOLE_PATH = '/admin';
const CONSOLE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../console');
export const CONSOLE_DIST = join(CONSOLE_ROOT, 'dist');
const INDEX_FILE = join(CONSOLE_DIST, 'index.html');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

interface AssetResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

/**
 * The answer to a GET or HEAD under `/admin`, or `undefined` for any other request (the API's routes serve it).
 * A path that resolves outside `console/dist` is refused as not found, whatever its dots or encodings.
 */
export async function consoleAsset(method: string, pathname: string): Promise<AssetResult | undefined> {
  if ((method !== 'GET' && method !== 'HEAD') || !(pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`))) return undefined;
  if (pathname === CONSOLE_CONFIG_PATH) return configResult();
  if (!existsSync(INDEX_FILE)) {
    return errorResult(503, 'SERVICE_UNAVAILABLE', 'The admin console is not built: run `npm run console:build` (or restart `npm start`, which builds it)');
  }
  const file = assetFile(pathname.slice(CONSOLE_PATH.length));
  if (file === undefined) return errorResult(404, 'NOT_FOUND', 'No such file in the admin console');
  if (isFile(file)) return fileResult(file);
  // A path with an extension names a file (a script, a stylesheet): a missing one is a 404, never the app's page.
  if (extname(file) !== '') return errorResult(404, 'NOT_FOUND', 'No such file in the admin console');
  return fileResult(INDEX_FILE);
}

/** The file a request path names inside `console/dist`, or `undefined` when it is malformed or leaves the folder. */
function assetFile(relativePath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(relativePath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = resolve(CONSOLE_DIST, `.${decoded.startsWith('/') ? '' : '/'}${decoded}`);
  if (file !== CONSOLE_DIST && !file.startsWith(`${CONSOLE_DIST}${sep}`)) return undefined;
  return file === CONSOLE_DIST ? INDEX_FILE : file;
}

const isFile = (file: string) => {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
};

async function fileResult(file: string): Promise<AssetResult> {
  const body = await readFile(file);
  // Vite names the files under assets/ by their content's hash: they never change. The page itself always may.
  const hashed = file.startsWith(`${join(CONSOLE_DIST, 'assets')}${sep}`);
  return {
    statusCode: 200,
    headers: {
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...SECURITY_HEADERS,
    },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}

const SECURITY_HEADERS = { ...CONSOLE_SECURITY_HEADERS, 'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY };

/** Locally the console always signs in with a pasted token (`npm run admin-token`): there is no OpenID provider. */
function configResult(): AssetResult {
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
    body: Buffer.from(JSON.stringify(consoleRuntimeConfig())).toString('base64'),
    isBase64Encoded: true,
  };
}

function errorResult(statusCode: number, code: string, message: string): AssetResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS },
    body: Buffer.from(JSON.stringify({ error: message, code })).toString('base64'),
    isBase64Encoded: true,
  };
}

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
