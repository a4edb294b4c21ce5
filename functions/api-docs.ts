/**
 * GET /api/v1/docs: the browsable API reference, rendered in the browser from `GET /api/v1/openapi.json` by
 * Scalar's API reference (`@scalar/api-reference`, served by this service at `GET /api/v1/docs/scalar.js`: no CDN).
 *
 * A third-party script runs on the API's own origin, so the page is held to a Content-Security-Policy: scripts
 * from this origin and the one inline script below (by its hash), requests to this origin only (Scalar's features
 * that call its own servers cannot), no framing. The script's URL names the package version, so a browser caches
 * it for good and fetches the new one after an upgrade.
 */
import { createHash } from 'node:crypto';
import { API_PREFIX } from '../lib/routes';
import { httpRoute } from '../lib/composition/http-route';
import { scalarVersion } from '../lib/http/docs-viewer';
import { apiReferenceDoc } from '../lib/http/route-docs/documentation';

/** The script's URL: versioned, so `scalar.js` may be cached as immutable. */
export const SCRIPT_URL = `${API_PREFIX}/docs/scalar.js?v=${scalarVersion()}`;

const MOUNT = `
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
    `;

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
    <script src="${SCRIPT_URL}"></script>
    <script>${MOUNT}</script>
  </body>
</html>
`;

/** Scalar styles itself with inline styles and `data:` images; everything else is this origin's, or nothing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(MOUNT, 'utf8').digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const handler = httpRoute({ access: 'public', doc: apiReferenceDoc }, async () => ({
  status: 200,
  text: PAGE,
  contentType: 'text/html; charset=utf-8',
  headers: { 'cache-control': 'public, max-age=300', 'content-security-policy': CONTENT_SECURITY_POLICY },
}));
