/**
 * The API's own documentation over HTTP (issue 12): the OpenAPI document the service serves is the generated
 * file, and the reference page loads its viewer script from this service (no CDN), compressed when it may be.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { OPENAPI_FILE } from '../../infra/openapi';
import { TestApi } from '../support/api';

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
    expect(html).toContain('<script src="/api/v1/docs/scalar.js"></script>');
    expect(html).toContain("url: '/api/v1/openapi.json'");
    expect(html).not.toMatch(/https?:\/\//);
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
