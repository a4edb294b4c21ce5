/** The keys of a partner, or the platform-wide ones: newest first (ids only), each revocable after a confirmation. */
import type { ApiKey } from '../api-types';
import { ErrorNotice } from '../feedback';
import { when } from '../format';
import { ListView } from '../list-view';
import { useCursor } from '../paging';
import { useApi } from '../session';
import { useAction, useLoad } from '../use-call';

/** Whose keys a list shows: one partner's, or those of no partner (platform-wide). */
export type KeyOwner = { kind: 'partner'; partnerId: string } | { kind: 'platform' };

export function KeyList({ owner }: { owner: KeyOwner }) {
  const api = useApi();
  const paging = useCursor();
  const partnerId = owner.kind === 'partner' ? owner.partnerId : undefined;
  const page = useLoad(
    () => (partnerId === undefined ? api.listPlatformApiKeys(paging.cursor) : api.listApiKeys(partnerId, paging.cursor)),
    [api, partnerId, paging.cursor],
  );
  const revoke = useAction();
  const revokeKey = async (key: ApiKey) => {
    if (!window.confirm(`Revoke ${key.key_id}? Requests signed with it are refused from the next one.`)) return;
    const done = await revoke.run(async () => {
      await api.revokeApiKey(key.key_id);
      return true;
    });
    if (done === true) page.reload();
  };
  return (
    <>
      <ErrorNotice error={revoke.error} />
      <ListView
        load={page}
        label={partnerId === undefined ? 'Platform-wide API keys' : 'API keys'}
        empty={partnerId === undefined ? 'There are no platform-wide API keys.' : 'This partner has no API keys.'}
        headers={['Key id', 'Scope', 'Created', 'Actions']}
        paging={paging}
        row={(key) => (
          <tr key={key.key_id}>
            <td>
              <code>{key.key_id}</code>
            </td>
            <td>{key.scope}</td>
            <td>{when(key.created_at)}</td>
            <td className="actions">
              <button type="button" className="danger" disabled={revoke.pending} onClick={() => revokeKey(key)}>
                Revoke
              </button>
            </td>
          </tr>
        )}
      />
    </>
  );
}
