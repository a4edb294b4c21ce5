/**
 * The API reference's "Documentation" section: the OpenAPI document and the browsable reference
 * (`functions/openapi-document`, `api-docs`, `api-docs-script`).
 */
import * as z from 'zod';
import { API_PREFIX } from '../../routes';
import type { RouteDoc } from '../route-doc';

export const openApiDocumentDoc: RouteDoc = {
  summary: 'The OpenAPI 3.1 document of this API',
  description: 'Every route, its request and response schemas, security and error codes. Browse it at `GET /api/v1/docs`.',
  tag: 'Documentation',
  responses: { 200: { description: 'The document', schema: z.record(z.string(), z.unknown()).meta({ type: 'object', description: 'An OpenAPI 3.1 document' }) } },
};

export const apiReferenceDoc: RouteDoc = {
  summary: 'The browsable API reference (HTML)',
  description: `Open it in a browser. It renders \`${API_PREFIX}/openapi.json\` with Scalar's API reference, served by this service.`,
  tag: 'Documentation',
  responses: {
    200: {
      description: 'An HTML page',
      contentType: 'text/html',
      schema: z.string(),
      headers: { 'Content-Security-Policy': 'Scripts and requests to this origin only; the page cannot be framed' },
    },
  },
};

export const apiReferenceScriptDoc: RouteDoc = {
  summary: "The API reference page's script",
  description: "Scalar's API reference (`@scalar/api-reference`), its standalone browser build; gzip-compressed when the browser accepts it.",
  tag: 'Documentation',
  responses: { 200: { description: 'JavaScript', contentType: 'text/javascript', schema: z.string() } },
};
