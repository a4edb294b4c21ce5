/**
 * A partner's API keys: pick the partner, issue a key (its key and HMAC secret shown this once), list the keys
 * (`GET /admin/partners/{id}/api-keys`: ids only) and revoke one (`DELETE /admin/api-keys/{key_id}`).
 */
import { useState } from 'react';
import type { IssuedApiKey } from '../api-types';
import { ErrorNotice } from '../feedback';
import { useApi } from '../session';
import { useAction } from '../use-call';
import { IssuedKey } from './issued-key';
import { KeyList } from './key-list';
import { PartnerPicker } from '../partner-picker';

interface Props {
  partnerId: string | undefined;
  onChoosePartner: (partnerId: string) => void;
}

export function ApiKeysSection({ partnerId, onChoosePartner }: Props) {
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      <PartnerPicker partnerId={partnerId} onChoose={onChoosePartner} />
      {partnerId !== undefined && <PartnerKeys key={partnerId} partnerId={partnerId} />}
    </section>
  );
}

function PartnerKeys({ partnerId }: { partnerId: string }) {
  const api = useApi();
  const issue = useAction();
  const [issued, setIssued] = useState<IssuedApiKey | undefined>();
  const [listVersion, setListVersion] = useState(0);
  const issueKey = async () => {
    const key = await issue.run(() => api.issueApiKey(partnerId));
    if (key === undefined) return;
    setIssued(key);
    setListVersion((version) => version + 1);
  };
  return (
    <>
      <div className="buttons">
        <button type="button" disabled={issue.pending} onClick={issueKey}>
          {issue.pending ? 'Issuing…' : 'Issue an API key'}
        </button>
      </div>
      <ErrorNotice error={issue.error} />
      {issued !== undefined && <IssuedKey issued={issued} onDone={() => setIssued(undefined)} />}
      <KeyList key={listVersion} partnerId={partnerId} />
    </>
  );
}
