/**
 * The admin console (`console/`, a Vite + React app) as the local HTTP API serves it: `GET /admin` and
 * everything under it answer with the built files of `console/dist`, `index.html` standing in for any path without
 * a file extension (the app routes those itself), and `/admin/config.json` with the runtime configuration: token
 * sign-in (in AWS the console stack writes its own, `infra/aws/console-stack.ts`). The console only calls the admin
 * API, from this same origin, so its pages are held to a Content-Security-Policy as strict as the API reference's;
 * the policy and the other headers are `infra/shared/console-site.ts`'s, which CloudFront sends in AWS.
 *
 * `npm start` builds the console first when `console/dist` is missing or older than a file under `console/`
 * (`infra/shared/console-build.ts`); the browser test and `cdk synth` build it the same way.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { CONSOLE_DIST, INDEX_FILE } from '../../shared/console-build';
import { CONSOLE_CONFIG_PATH, CONSOLE_CONTENT_SECURITY_POLICY, CONSOLE_SECURITY_HEADERS, consoleRuntimeConfig } from '../../shared/console-site';

const CONSOLE_PATH = '/admin';

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
