/**
 * API keys: a partner's (pick the partner) or the platform-wide ones (of no partner). Either way: issue a key (its
 * key and HMAC secret shown this once), list the keys (ids only: `GET /admin/partners/{id}/api-keys` or
 * `GET /admin/api-keys`) and revoke one (`DELETE /admin/api-keys/{key_id}`).
 */
import { useState } from 'react';
import type { IssuedApiKey } from '../api-types';
import { ErrorNotice } from '../feedback';
import { PartnerPicker } from '../partner-picker';
import { useApi } from '../session';
import { useAction } from '../use-call';
import { IssuedKey } from './issued-key';
import { KeyList, type KeyOwner } from './key-list';

interface Props {
  partnerId: string | undefined;
  onChoosePartner: (partnerId: string) => void;
}

type View = 'partner' | 'platform';

export function ApiKeysSection({ partnerId, onChoosePartner }: Props) {
  const [view, setView] = useState<View>('partner');
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      <fieldset>
        <legend>Keys of</legend>
        <div className="checkboxes">
          <label className="checkbox">
            <input type="radio" name="key-owner" checked={view === 'partner'} onChange={() => setView('partner')} />
            A partner
          </label>
          <label className="checkbox">
            <input type="radio" name="key-owner" checked={view === 'platform'} onChange={() => setView('platform')} />
            Platform-wide (no partner)
          </label>
        </div>
      </fieldset>
      {view === 'platform' ? (
        <OwnerKeys key="platform" owner={{ kind: 'platform' }} />
      ) : (
        <>
          <PartnerPicker partnerId={partnerId} onChoose={onChoosePartner} />
          {partnerId !== undefined && <OwnerKeys key={partnerId} owner={{ kind: 'partner', partnerId }} />}
        </>
      )}
    </section>
  );
}

function OwnerKeys({ owner }: { owner: KeyOwner }) {
  const api = useApi();
  const issue = useAction();
  const [issued, setIssued] = useState<IssuedApiKey | undefined>();
  const [listVersion, setListVersion] = useState(0);
  const issueKey = async () => {
    const key = await issue.run(() => (owner.kind === 'platform' ? api.issuePlatformApiKey() : api.issueApiKey(owner.partnerId)));
    if (key === undefined) return;
    setIssued(key);
    setListVersion((version) => version + 1);
  };
  return (
    <>
      {owner.kind === 'platform' && (
        <p className="hint">A platform-wide key may act for any partner (each request names its partner); partner-only routes refuse it.</p>
      )}
      <div className="buttons">
        <button type="button" disabled={issue.pending} onClick={issueKey}>
          {issue.pending ? 'Issuing…' : owner.kind === 'platform' ? 'Issue a platform-wide key' : 'Issue an API key'}
        </button>
      </div>
      <ErrorNotice error={issue.error} />
      {issued !== undefined && <IssuedKey issued={issued} onDone={() => setIssued(undefined)} />}
      <KeyList key={listVersion} owner={owner} />
    </>
  );
}
