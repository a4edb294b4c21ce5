/**
 * GET /api/v1/docs: the browsable API reference, rendered in the browser from `GET /api/v1/openapi.json` by
 * Scalar's API reference (`@scalar/api-reference`, served by this service at `GET /api/v1/docs/scalar.js`: no CDN).
 */
import * as z from 'zod';
import { API_PREFIX } from '../infra/routes';
import { httpRoute } from '../lib/http/chain';
import type { RouteDoc } from '../lib/http/route-doc';

const doc: RouteDoc = {
  summary: 'The browsable API reference (HTML)',
  description: `Open it in a browser. It renders \`${API_PREFIX}/openapi.json\` with Scalar's API reference, served by this service.`,
  tag: 'Documentation',
  responses: { 200: { description: 'An HTML page', contentType: 'text/html', schema: z.string() } },
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Partner Payments Service: API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <!-- Not id="api-reference": the standalone script mounts a viewer of its own on that id, unconfigured. -->
    <div id="app"></div>
    <script src="${API_PREFIX}/docs/scalar.js"></script>
    <script>
      Scalar.createApiReference('#app', {
        url: '${API_PREFIX}/openapi.json',
        hideClientButton: true,
        withDefaultFonts: false,
        telemetry: false,
        // On a local address (localhost, 127.0.0.1) Scalar turns its "Ask AI" agent on, which calls
        // proxy.scalar.com (api.scalar.com's API registry) as soon as the page renders.
        agent: { disabled: true },
        // Scalar's developer toolbar, shown on local addresses: its Share and Deploy menus upload the document
        // to Scalar (through proxy.scalar.com) on a click, and it is no part of the reference.
        showDeveloperTools: 'never',
      });
    </script>
  </body>
</html>
`;

export const handler = httpRoute({ access: 'public', doc }, async () => ({
  status: 200,
  text: PAGE,
  contentType: 'text/html; charset=utf-8',
  headers: { 'cache-control': 'public, max-age=300' },
}));
