/**
 * The API's own documentation over HTTP: the OpenAPI document the service serves is the generated
 * file, and the reference page loads its viewer script from this service (no CDN), compressed when it may be.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { OPENAPI_FILE } from '../../../infra/openapi/document';
import { scalarVersion } from '../../../lib/http/docs-viewer';
import { acceptsGzip } from '../../../functions/api-docs-script';
import { TestApi } from '../../support/api';

let api: TestApi;
beforeAll(async () => {
  api = await TestApi.start();
});
afterAll(() => api.close());

const viewerScript = () => readFileSync(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'));

describe('GET /api/v1/openapi.json', () => {
  it('serves docs/openapi.json, without credentials', async () => {
    const response = await fetch(`${api.baseUrl}/openapi.json`);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')));
  });
});

describe('GET /api/v1/docs', () => {
  it('is an HTML page that renders the document with the viewer this service serves', async () => {
    const response = await fetch(`${api.baseUrl}/docs`);
    const html = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain(`<script src="/api/v1/docs/scalar.js?v=${scalarVersion()}"></script>`);
    expect(html).toContain("url: '/api/v1/openapi.json'");
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('holds the page to a Content-Security-Policy: this origin only, the inline mount script by its hash, no framing; nothing is sniffed', async () => {
    const response = await fetch(`${api.baseUrl}/docs`);
    const html = await response.text();
    const policy = new Map((response.headers.get('content-security-policy') ?? '').split('; ').map((directive) => [directive.split(' ')[0], directive]));
    const inline = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;

    expect(policy.get('default-src')).toBe("default-src 'none'");
    expect(policy.get('script-src')).toBe(`script-src 'self' 'sha256-${createHash('sha256').update(inline, 'utf8').digest('base64')}'`);
    expect(policy.get('connect-src')).toBe("connect-src 'self'");
    expect(policy.get('frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('lets a browser keep the versioned script for good, and any other URL of it for five minutes', async () => {
    const versioned = await fetch(`${api.baseUrl}/docs/scalar.js?v=${scalarVersion()}`);
    const stale = await fetch(`${api.baseUrl}/docs/scalar.js?v=0.0.1`);
    const bare = await fetch(`${api.baseUrl}/docs/scalar.js`);

    expect(versioned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(stale.headers.get('cache-control')).toBe('public, max-age=300');
    expect(bare.headers.get('cache-control')).toBe('public, max-age=300');
    await Promise.all([versioned, stale, bare].map((response) => response.arrayBuffer()));
  });

  it('sends gzip only where Accept-Encoding gives it a quality above 0 (RFC 9110)', async () => {
    const refused = await fetch(`${api.baseUrl}/docs/scalar.js`, { headers: { 'accept-encoding': 'br;q=1, gzip;q=0' } });
    await refused.arrayBuffer();

    expect(refused.headers.get('content-encoding')).toBeNull();
    expect(['gzip', 'GZIP', 'gzip;q=0.5', '*', 'br, *;q=0.1', 'x-gzip'].map(acceptsGzip)).toEqual([true, true, true, true, true, true]);
    expect(['', 'identity', 'gzip;q=0', 'deflate, gzip;q=0.0', '*;q=0', 'br', 'gzip;q=0, *'].map(acceptsGzip)).toEqual([false, false, false, false, false, false, false]);
  });

  it('serves the viewer script gzip-compressed to a client that accepts it, and plain to one that does not', async () => {
    const compressed = await fetch(`${api.baseUrl}/docs/scalar.js`, { headers: { 'accept-encoding': 'gzip' } });
    const plain = await fetch(`${api.baseUrl}/docs/scalar.js`, { headers: { 'accept-encoding': 'identity' } });

    expect(compressed.status).toBe(200);
    expect(compressed.headers.get('content-type')).toMatch(/^text\/javascript/);
    // fetch decompresses a gzip body by itself: the bytes read are the script's.
    expect(Buffer.from(await compressed.arrayBuffer()).equals(viewerScript())).toBe(true);
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(Buffer.from(await plain.arrayBuffer()).equals(viewerScript())).toBe(true);
    // ... and it was sent compressed: a third of the bytes or less.
    expect(compressed.headers.get('content-encoding')).toBe('gzip');
    expect(Number(compressed.headers.get('content-length'))).toBeLessThan(viewerScript().length / 3);
  });
});
