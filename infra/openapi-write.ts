/**
 * `npm run openapi`: writes `docs/openapi.json` from the routes' contracts (`openapi.ts`), which the service
 * serves at `GET /api/v1/openapi.json`. Run it after changing a route, its schemas or its doc; the tests fail
 * while the file and the code differ.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument, OPENAPI_FILE, serializeOpenApi } from './openapi';

const document = await buildOpenApiDocument();
writeFileSync(OPENAPI_FILE, serializeOpenApi(document));
const paths = Object.keys(document.paths as object).length;
console.log(`wrote ${OPENAPI_FILE}: ${paths} paths`);
