/**
 * GET /api/v1/docs/scalar.js: the script of the API reference page (`@scalar/api-reference`'s standalone
 * browser build), served by this service so the page needs no CDN. Sent gzip-compressed to a browser that
 * accepts it (3.7 MB plain, about 1 MB compressed), compressed once per container.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import * as z from 'zod';
import { httpRoute } from '../lib/composition/http-route';
import { scalarVersion } from '../lib/http/docs-viewer';
import type { HttpResult } from '../lib/http/types';
import { apiReferenceScriptDoc } from '../lib/http/route-docs/documentation';

/** Where the bundle for AWS puts the script (beside `index.mjs`: `infra/build/bundling.ts`, FUNCTION_FILES). */
export const SCRIPT_FILE = 'scalar-standalone.js';

let script: { plain: string; gzip: string } | undefined;

/** The script beside the bundle (AWS), else from the package (the local runtime, the tests). */
function loadScript(): { plain: string; gzip: string } {
  if (script === undefined) {
    let plain: string;
    try {
      plain = readFileSync(new URL(`./${SCRIPT_FILE}`, import.meta.url), 'utf8');
    } catch {
      plain = readFileSync(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'), 'utf8');
    }
    script = { plain, gzip: gzipSync(plain).toString('base64') };
  }
  return script;
}

/** `?v=` the page names: the version this container serves, so its answer never changes. */
const ScriptQuery = z.looseObject({
  v: z.string().max(64).optional().meta({ description: "The viewer's version, as the page names it: with the version served, the answer is cached for good" }),
});

/** A year, unchangeable, for the versioned URL the page uses; five minutes for any other. */
const cacheControl = (versioned: boolean) => (versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300');

/**
 * Whether `Accept-Encoding` takes gzip: named (or `*`) with a quality above 0. `gzip;q=0` refuses it, as does
 * `*;q=0` without gzip named (RFC 9110 §12.5.3).
 */
export function acceptsGzip(header: string | undefined): boolean {
  const qualities = new Map<string, number>();
  for (const entry of (header ?? '').split(',')) {
    const [coding, ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (coding === undefined || coding === '') continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    qualities.set(coding, Number.isFinite(quality) ? quality : 0);
  }
  return (qualities.get('gzip') ?? qualities.get('x-gzip') ?? qualities.get('*') ?? 0) > 0;
}

export const handler = httpRoute({ access: 'public', query: ScriptQuery, doc: apiReferenceScriptDoc }, async ({ headers, query }): Promise<HttpResult> => {
  const { plain, gzip } = loadScript();
  const answer = { status: 200, contentType: 'text/javascript; charset=utf-8' };
  const cached = { 'cache-control': cacheControl(query.v === scalarVersion()), vary: 'accept-encoding' };
  if (!acceptsGzip(headers['accept-encoding'])) return { ...answer, text: plain, headers: cached };
  return { ...answer, text: gzip, base64: true, headers: { ...cached, 'content-encoding': 'gzip' } };
});
