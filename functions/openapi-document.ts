/**
 * GET /api/v1/openapi.json: the OpenAPI 3.1 document of this API. It is `docs/openapi.json`, which `npm run
 * openapi` writes from the routes' own contracts (`infra/openapi/document.ts`: the zod schemas each route validates with,
 * its responses and error codes); a test fails when the file and the code differ. Read as a file, not bundled:
 * beside the bundle in AWS (`infra/build/bundling.ts`, FUNCTION_FILES), from `docs/` locally.
 */
import { readFileSync } from 'node:fs';
import { httpRoute } from '../lib/composition/http-route';
import { openApiDocumentDoc } from '../lib/http/route-docs/documentation';

let document: string | undefined;

function loadDocument(): string {
  if (document === undefined) {
    try {
      document = readFileSync(new URL('./openapi.json', import.meta.url), 'utf8');
    } catch {
      document = readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8');
    }
  }
  return document;
}

export const handler = httpRoute({ access: 'public', doc: openApiDocumentDoc }, async () => ({
  status: 200,
  text: loadDocument(),
  contentType: 'application/json; charset=utf-8',
  headers: { 'cache-control': 'public, max-age=300' },
}));
