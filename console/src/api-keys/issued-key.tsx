/** A key just issued: the API key and its HMAC secret, shown this once (the service keeps only a hash). */
import type { IssuedApiKey } from '../api-types';
import { Secret } from '../secret';

export function IssuedKey({ issued, onDone }: { issued: IssuedApiKey; onDone: () => void }) {
  return (
    <div className="panel issued" role="region" aria-label="New API key">
      <h3>
        New API key <code>{issued.key_id}</code>
      </h3>
      <p className="warning">
        <strong>Shown only now.</strong> Copy the API key and the HMAC secret and hand them to the partner: the service
        keeps only a hash of the key and cannot show either again. Lost? Issue a new key and revoke this one.
      </p>
      <Secret label="API key (x-api-key)" value={issued.api_key} />
      <Secret label="HMAC secret (signs x-svc-hmac)" value={issued.hmac_secret} />
      <button type="button" className="secondary" onClick={onDone}>
        I have copied them
      </button>
    </div>
  );
}
