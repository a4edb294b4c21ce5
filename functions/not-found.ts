/**
 * API Gateway's `$default` route (and the local runtime's fallback): a path no route serves. 405 with
 * `Allow` when the path exists under other methods, else 404 NOT_FOUND, both in the spec's error body.
 */
import { resolveRoute } from '../lib/routes';
import { errors } from '../lib/domain/errors';
import { httpRoute } from '../lib/composition/http-route';

export const rejectUnknownRoute = async ({ method, path }: { method: string; path: string }): Promise<never> => {
  const resolved = resolveRoute(method, path);
  if ('allowed' in resolved && resolved.allowed.length > 0) throw errors.methodNotAllowed(resolved.allowed);
  throw errors.notFound();
};

export const handler = httpRoute({ access: 'public' }, rejectUnknownRoute);
