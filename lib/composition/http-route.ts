/**
 * The `httpRoute` every HTTP function is built with: the chain of `lib/http/chain.ts` wired to the DynamoDB
 * adapters its access steps need (API keys, partners, rate windows, idempotency records), to the secret box that
 * opens HMAC secrets, and to the table's own judgement of which of its errors mean it is unavailable. Every route's
 * bundle carries these adapters, as it did when the chain imported them itself; no other adapter comes with them.
 */
import { createHttpRoute } from '../http/chain';
import { secretBox } from '../secrets';
import { findApiKey } from '../store/api-keys';
import { isDependencyUnavailable } from '../store/dynamo';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../store/idempotency';
import { getPartner } from '../store/partners';
import { findApiKeyAndPayee } from '../store/payees';
import { countRequest, rateLimitClock } from '../store/rate-limits';

export const httpRoute = createHttpRoute({
  apiKeys: { findApiKey, findApiKeyAndPayee },
  partners: { getPartner },
  secrets: secretBox,
  // Read at each request, so a test that pins `rateLimitClock.now` pins the chain's clock too.
  rateLimit: { now: () => rateLimitClock.now(), countRequest },
  idempotency: { claim: claimIdempotencyKey, complete: completeIdempotencyKey, release: releaseIdempotencyKey },
  isDependencyUnavailable,
});
