/** Wiring for the admin's partner and API-key routes: the table, and the secret box that seals new HMAC secrets. */
import { secretBox } from '../secrets';
import * as apiKeys from '../store/api-keys';
import * as partners from '../store/partners';
import type { PartnerDeps } from '../use-cases/partners';

export const partnerDeps: PartnerDeps = { partners, apiKeys, secrets: secretBox };
