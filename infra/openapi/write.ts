/**
 * `npm run openapi`: writes `docs/openapi.json` from the routes' contracts (`document.ts`), which the service
 * serves at `GET /api/v1/openapi.json`, and `docs/api.md`, its Markdown rendering (`markdown.ts`). Run it after changing a route, its schemas or its doc; the tests fail
 * while the file and the code differ.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument, OPENAPI_FILE, serializeOpenApi } from './document';
import { API_MARKDOWN_FILE, renderApiMarkdown } from './markdown';

const document = await buildOpenApiDocument();
writeFileSync(OPENAPI_FILE, serializeOpenApi(document));
writeFileSync(API_MARKDOWN_FILE, renderApiMarkdown(document));
const paths = Object.keys(document.paths as object).length;
console.log(`wrote ${OPENAPI_FILE} (${paths} paths) and ${API_MARKDOWN_FILE}`);
