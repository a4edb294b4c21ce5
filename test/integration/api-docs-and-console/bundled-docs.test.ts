/**
 * The documentation functions as they deploy: their bundles read the files they serve beside
 * themselves (`infra/build/bundling.ts`, FUNCTION_FILES), so the files must be copied there by the build.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { buildFunction, FUNCTION_FILES } from '../../../infra/build/bundling';
import { SCALAR_PACKAGE_FILE, scalarVersion } from '../../../lib/http/docs-viewer';
import { OPENAPI_FILE } from '../../../infra/openapi/document';
import { httpEvent, lambdaContext } from '../../support/events';

/** Inside the project, so the bundles' external `@aws-sdk/*` imports resolve from its node_modules. */
const BUNDLES_DIR = join(dirname(OPENAPI_FILE), '..', '.data', 'test-bundles', `docs-${process.pid}`);
afterAll(() => rmSync(BUNDLES_DIR, { recursive: true, force: true }));

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean }>;

/** `functions/<name>.ts` built as it deploys, into a directory of its own, and its handler. */
async function built(name: string): Promise<{ dir: string; handler: Handler }> {
  const dir = join(BUNDLES_DIR, name);
  const { outfile } = await buildFunction(name, dir);
  const module = (await import(pathToFileURL(outfile).href)) as { handler: Handler };
  return { dir, handler: module.handler };
}

describe('the documentation functions, bundled', () => {
  it('serves docs/openapi.json from the copy beside the bundle', async () => {
    const { dir, handler } = await built('openapi-document');

    const response = await handler(httpEvent({ path: '/api/v1/openapi.json' }), lambdaContext());

    expect(Object.keys(FUNCTION_FILES['openapi-document']!)).toEqual(['openapi.json']);
    expect(readFileSync(join(dir, 'openapi.json'), 'utf8')).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  }, 60_000);

  it('serves the viewer script from the copy beside the bundle, gzip-compressed when accepted', async () => {
    const { dir, handler } = await built('api-docs-script');
    const script = readFileSync(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'));

    const response = await handler(httpEvent({ path: '/api/v1/docs/scalar.js', headers: { 'accept-encoding': 'gzip, br' } }), lambdaContext());

    expect(readFileSync(join(dir, 'scalar-standalone.js')).equals(script)).toBe(true);
    expect(response.statusCode).toBe(200);
    expect(response.isBase64Encoded).toBe(true);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(Buffer.from(response.body, 'base64')).equals(script)).toBe(true);
  }, 60_000);

  it("gives both documentation functions the viewer's package.json beside the bundle (in Lambda there is no package to read its version from)", async () => {
    const version = scalarVersion();
    const page = await built('api-docs');
    const script = await built('api-docs-script');

    const versioned = await script.handler(httpEvent({ path: '/api/v1/docs/scalar.js', query: { v: version } }), lambdaContext());

    for (const { dir } of [page, script]) expect(JSON.parse(readFileSync(join(dir, SCALAR_PACKAGE_FILE), 'utf8')).version).toBe(version);
    expect(versioned.headers['cache-control']).toMatch(/immutable/);
  }, 60_000);
});
